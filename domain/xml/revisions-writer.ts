// The revisions export: the changes of each revision, not whole records.

import type { RevisionChanges, XmlVersion } from '../model.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { isExpressibleInRevision, writeChange } from './write-changes.ts';
import { writeParts } from './write-items.ts';

export async function* writeRevisions(revisions: AsyncIterable<RevisionChanges>, version: XmlVersion): AsyncGenerator<string> {
  const vocab = vocabularyFor(version);
  const out = new Markup();
  yield out.openDocument(vocab.root.revisions, vocab).take();
  for await (const revision of revisions) {
    if (writeRevision(out, revision, vocab)) yield out.take();
  }
  yield out.close(vocab.root.revisions).take();
}

/** The parts of writeRevisions for a caller that drives the loop itself. */
export function revisionsDocument(version: XmlVersion): {
  opening: string;
  element: (revision: RevisionChanges) => string | undefined;
  closing: string;
} {
  const vocab = vocabularyFor(version);
  const out = new Markup();
  return {
    opening: out.openDocument(vocab.root.revisions, vocab).take(),
    element: (revision) => (writeRevision(out, revision, vocab) ? out.take() : undefined),
    closing: `</${vocab.root.revisions}>`,
  };
}

/**
 * False when nothing of the revision can be said in this version (a v1
 * reader never hears of metadata-only revisions, nobody of issue-only ones),
 * since an element without changes would be invalid.
 */
function writeRevision(out: Markup, revision: RevisionChanges, vocab: Vocabulary): boolean {
  const changes = revision.changes.filter((change) => isExpressibleInRevision(change, vocab.version));
  if (revision.created === undefined && changes.length === 0) return false;
  const names = vocab.revisions;
  const element = names.revision;
  out.open(element, [
    [names.revisionUuid, revision.revisionUuid],
    [vocab.id.entityId, revision.entityId],
    [vocab.id.entityUuid, revision.entityUuid],
    [names.batchId, revision.batchId],
  ]);
  if (revision.created !== undefined) {
    const created = vocab.revisionChange.newEntity;
    out.open(created, [
      [vocab.batch.entityType, revision.created.entityType],
      [vocab.batch.entityUuid, revision.entityUuid],
    ]);
    writeParts(out, revision.created.parts, vocab);
    out.close(created);
  }
  for (const change of changes) writeChange(out, change, vocab, vocab.revisionChange);
  out.close(element);
  return true;
}
