import type { EntityRecord, EntityRef, Item, Part } from '../../domain/model.ts';
import { briefDescription, displayName, preferredNamePart } from '../../domain/text.ts';
import type { RevisionList } from '../../services/reads/entities.ts';
import { html, safeLinkTarget, type Html } from './html.ts';
import { PART_LABELS, readableDateTime, readableInstant, STATE_LABELS } from './labels.ts';
import { apiRecordPath, apiRevisionPath, historyPath, recordPath, refKey, revisionPath } from './links.ts';
import { historyList } from './history-view.ts';

// A record as a person reads it: its names, type and state, its parts and
// their items in words, the records it refers to (by name, as links), the
// record that replaced it, its history, and where the API serves it.

/** The records a page's references name, by refKey: their number and preferred name. */
export type ResolvedRefs = ReadonlyMap<string, { entityId: number; name: string }>;

export interface RecordView {
  record: EntityRecord;
  refs: ResolvedRefs;
  /** The record page: the newest revisions. A revision page has none. */
  history?: RevisionList;
  /** A revision page: the revision shown, and whether it is the record's current one. */
  revision?: { id: string; current: boolean };
}

export function recordTitle(record: EntityRecord): string {
  const part = preferredNamePart(record);
  const name = part === undefined ? '' : displayName(part);
  return name === '' ? `Record ${record.entityId}` : name;
}

export function recordMain(view: RecordView): Html {
  const { record, revision } = view;
  const title = recordTitle(record);
  const description = briefDescription(record);
  return html`<article class="record">
<h1>${title}</h1>
<p class="lead">${record.entityType} · ${STATE_LABELS[record.state]}${description && html` · ${description}`}</p>
${revision && revisionNotice(record, revision)}
${record.replacedBy && html`<p class="notice" role="note">This record was replaced by ${referenceLink(record.replacedBy, view.refs)}.</p>`}
${facts(view)}
${otherNames(record)}
${parts(view)}
${issues(record)}
${view.history && historySection(record.entityId, view.history)}
</article>`;
}

function revisionNotice(record: EntityRecord, revision: { id: string; current: boolean }): Html {
  const when = readableInstant(record.revision.createdAt);
  return html`<p class="notice" role="note">${
    revision.current
      ? html`This is the current revision, of ${when}.`
      : html`This is the record as it was in its revision of ${when}, not as it is now.`
  } <a href="${recordPath({ entityId: record.entityId })}">The record as it is now</a> · <a href="${historyPath(record.entityId)}">All revisions</a></p>`;
}

/**
 * "Revision" is the rev the API's <rev> and the registry's client show;
 * the metadataRev (new on every change, also of participants or issues) is
 * labelled as such. "Previous revision" is the API's <prevRev>, a rev: as a
 * link it names the latest state of that rev, the one this revision was
 * built on (docs/decisions/0003).
 */
function facts(view: RecordView): Html {
  const { record, revision } = view;
  const { revision: info } = record;
  const api = revision ? apiRevisionPath(record.entityId, revision.id) : apiRecordPath(record.entityId);
  return html`<section aria-labelledby="facts">
<h2 id="facts">About this record</h2>
<dl class="facts">
  <dt>Number</dt><dd>${record.entityId}</dd>
  <dt>UUID</dt><dd class="id">${record.entityUuid}</dd>
  <dt>Type</dt><dd>${record.entityType}</dd>
  <dt>State</dt><dd>${STATE_LABELS[record.state]}</dd>
  ${record.replacedBy && html`<dt>Replaced by</dt><dd>${referenceLink(record.replacedBy, view.refs)}</dd>`}
  <dt>Changed</dt><dd><time datetime="${info.createdAt}">${readableInstant(info.createdAt)}</time>${info.user && html` by ${info.user.name}`}</dd>
  <dt>Revision</dt><dd class="id">${info.rev}</dd>
  <dt>Metadata revision</dt><dd class="id">${info.metadataRev}</dd>
  ${info.prevRev && html`<dt>Previous revision</dt><dd class="id"><a href="${revisionPath(record.entityId, info.prevRev)}">${info.prevRev}</a></dd>`}
  <dt>In the API (XML)</dt><dd class="id"><a href="${api}" type="application/xml">${api}</a></dd>
  ${!revision && html`<dt>EAC-CPF 2.0</dt><dd class="id"><a href="${recordPath({ entityId: record.entityId })}/eac-cpf" type="application/eac-cpf+xml">${recordPath({ entityId: record.entityId })}/eac-cpf</a></dd>`}
</dl>
</section>`;
}

function otherNames(record: EntityRecord): Html | undefined {
  const preferred = preferredNamePart(record);
  const names = record.parts
    .filter((part) => part.type === 'PT_NAME' && part !== preferred)
    .map(displayName)
    .filter((name) => name !== '');
  if (names.length === 0) return undefined;
  return html`<section aria-labelledby="names">
<h2 id="names">Other names</h2>
<ul>${names.map((name) => html`<li>${name}</li>`)}</ul>
</section>`;
}

function parts(view: RecordView): Html | undefined {
  const { record } = view;
  if (record.parts.length === 0) return undefined;
  const preferred = preferredNamePart(record);
  const known = new Set(record.parts.map((part) => part.partUuid));
  const children = new Map<string, Part[]>();
  const top: Part[] = [];
  for (const part of record.parts) {
    if (part.parent !== undefined && part.parent !== part.partUuid && known.has(part.parent)) {
      const siblings = children.get(part.parent) ?? [];
      siblings.push(part);
      children.set(part.parent, siblings);
    } else top.push(part);
  }
  const shown = new Set<string>();
  const renderPart = (part: Part): Html => {
    shown.add(part.partUuid);
    const label =
      part.type === 'PT_NAME'
        ? html`${PART_LABELS[part.type]}: ${displayName(part) || '(no name)'}${part === preferred && ' (preferred)'}`
        : html`${PART_LABELS[part.type]}`;
    const nested = (children.get(part.partUuid) ?? []).filter((child) => !shown.has(child.partUuid));
    return html`<li class="part">
<h3>${label}</h3>
${items([...part.items, ...(part.extensionItems ?? [])], view)}
${nested.length > 0 && html`<ul class="parts">${nested.map(renderPart)}</ul>`}
</li>`;
  };
  return html`<section aria-labelledby="parts">
<h2 id="parts">Parts</h2>
<ul class="parts">${top.map(renderPart)}</ul>
</section>`;
}

function items(list: readonly Item[], view: RecordView): Html {
  if (list.length === 0) return html`<p class="empty">No items.</p>`;
  return html`<dl class="items">${list.map((item) => html`<dt>${itemLabel(item)}</dt><dd>${itemValue(item, view)}</dd>`)}</dl>`;
}

function itemLabel(item: Item): string {
  // An enum item's value is its spec; any other item's spec qualifies its type.
  return item.kind === 'enum' || item.spec === undefined ? item.type : `${item.type} (${item.spec})`;
}

function itemValue(item: Item, view: RecordView): Html {
  switch (item.kind) {
    case 'string':
    case 'int':
      return html`<span class="text">${item.value}</span>`;
    case 'boolean':
      return html`${item.value ? 'Yes' : 'No'}`;
    case 'enum':
      return html`${item.spec ?? 'yes'}`;
    case 'unitDate': {
      const from = `${readableDateTime(item.from)}${item.fromEstimate ? ' (estimated)' : ''}`;
      const to = `${readableDateTime(item.to)}${item.toEstimate ? ' (estimated)' : ''}`;
      return html`${from === to ? from : `${from} – ${to}`}`;
    }
    case 'link': {
      const target = safeLinkTarget(item.url);
      const text = item.name ?? item.url;
      return target === undefined
        ? html`<span class="text">${text}</span>`
        : html`<a class="id" href="${target}" rel="nofollow noopener noreferrer">${text}</a>`;
    }
    case 'entityRef':
      return item.target.kind === 'stored'
        ? referenceLink(item.target.ref, view.refs)
        : html`a record of the same batch (${item.target.localId})`;
    case 'binary':
      return html`binary data of ${Math.floor((item.base64.replace(/=+$/, '').length * 3) / 4)} bytes`;
  }
}

/** A link to a referenced record, by its name when the page found it. */
function referenceLink(ref: EntityRef, refs: ResolvedRefs): Html {
  const found = refs.get(refKey(ref));
  if (found === undefined) return html`<a href="${recordPath(ref)}">record ${ref.entityId ?? ref.entityUuid}</a> (not found)`;
  return html`<a href="${recordPath({ entityId: found.entityId })}">${found.name}</a> (${found.entityId})`;
}

function issues(record: EntityRecord): Html | undefined {
  if (record.issues.length === 0) return undefined;
  return html`<section aria-labelledby="issues">
<h2 id="issues">Issues</h2>
<ul>${record.issues.map((issue) => html`<li><strong>${issue.severity === 'ERROR' ? 'Error' : 'Warning'}:</strong> <span class="text">${issue.message}</span></li>`)}</ul>
</section>`;
}

function historySection(entityId: number, history: RevisionList): Html {
  return html`<section aria-labelledby="history">
<h2 id="history">History</h2>
${historyList(entityId, history.revisions)}
${history.total > history.revisions.length && html`<p><a href="${historyPath(entityId)}">All ${history.total} revisions</a></p>`}
</section>`;
}

/** The references of a record the page shows by name: its items' targets and its replacement. */
export function referencesOf(record: EntityRecord): EntityRef[] {
  const refs: EntityRef[] = [];
  if (record.replacedBy) refs.push(record.replacedBy);
  for (const part of record.parts) {
    for (const item of [...part.items, ...(part.extensionItems ?? [])]) {
      if (item.kind === 'entityRef' && item.target.kind === 'stored') refs.push(item.target.ref);
    }
  }
  return refs;
}
