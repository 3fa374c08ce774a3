import type { RevisionList, RevisionSummary } from '../../services/reads/entities.ts';
import { html, type Html } from './html.ts';
import { readableInstant } from './labels.ts';
import { historyPath, recordPath, revisionPath } from './links.ts';
import { pager } from './pager.ts';

// A record's revisions, newest first, each a link to the record as it was then.
// Each shows its rev, as the API and the record page name it; the link names
// the entry by its metadataRev, the one id that tells a metadata-only change
// from the others of the same rev (a rev names the latest of them,
// docs/decisions/0003), labelled where shown.

export function historyList(entityId: number, revisions: readonly RevisionSummary[]): Html {
  if (revisions.length === 0) return html`<p class="empty">No revisions on this page.</p>`;
  return html`<ol class="history">${revisions.map(
    (revision) => html`<li>
  <a href="${revisionPath(entityId, revision.metadataRev)}"><time datetime="${revision.createdAt}">${readableInstant(revision.createdAt)}</time></a>
  ${revision.contentChanged ? 'content changed' : 'metadata changed'}${revision.userName && html` by ${revision.userName}`}
  · revision <span class="id">${revision.rev}</span>${!revision.contentChanged && html` · metadata revision <span class="id">${revision.metadataRev}</span>`}
</li>`,
  )}</ol>`;
}

export function historyMain(title: string, history: RevisionList, page: number, pageSize: number): Html {
  const { entityId } = history;
  return html`<h1>History of ${title}</h1>
<p class="lead">${history.total} ${history.total === 1 ? 'revision' : 'revisions'}, newest first. <a href="${recordPath({ entityId })}">The record as it is now</a></p>
${historyList(entityId, history.revisions)}
${pager({ page, pageSize, total: history.total, href: (target) => historyPath(entityId, target), label: 'Revision pages' })}`;
}
