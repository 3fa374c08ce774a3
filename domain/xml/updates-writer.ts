// Lists of updated records: updates / ups, and updatesFrom / upsf with its
// summary. Rows are tiny, so they are sent in chunks of many rows.

import type { RevisionPointer, UpdatesFromInfo, XmlVersion } from '../model.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { V2_META } from './vocabulary-v2.ts';

const CHUNK_CHARACTERS = 16 * 1024;

export async function* writeUpdates(pointers: AsyncIterable<RevisionPointer>, version: XmlVersion): AsyncGenerator<string> {
  const vocab = vocabularyFor(version);
  const out = new Markup().openDocument(vocab.root.updates, vocab);
  yield* writePointers(out, pointers, vocab);
  yield out.close(vocab.root.updates).take();
}

/** Without pointers the document holds only the summary (too many updates to list). */
export async function* writeUpdatesFrom(
  info: UpdatesFromInfo,
  pointers: AsyncIterable<RevisionPointer> | undefined,
  version: XmlVersion,
): AsyncGenerator<string> {
  const vocab = vocabularyFor(version);
  const names = vocab.updates;
  const out = new Markup().openDocument(vocab.root.updatesFrom, vocab);
  out.open(names.info).leaf(names.from, info.from).leaf(names.to, info.to).leaf(names.count, info.count).close(names.info);
  if (pointers !== undefined) {
    out.open(names.updates);
    yield* writePointers(out, pointers, vocab);
    out.close(names.updates);
  }
  yield out.close(vocab.root.updatesFrom).take();
}

/** Leaves the last partial chunk in `out` for the caller to finish. */
async function* writePointers(out: Markup, pointers: AsyncIterable<RevisionPointer>, vocab: Vocabulary): AsyncGenerator<string> {
  const names = vocab.updates;
  for await (const pointer of pointers) {
    out.empty(names.revInfo, [
      [vocab.id.entityId, pointer.entityId],
      [vocab.id.entityUuid, pointer.entityUuid],
      [names.rev, pointer.rev],
      [V2_META.metadataRev, vocab.version === 'v2' ? pointer.metadataRev : undefined],
    ]);
    if (out.length >= CHUNK_CHARACTERS) yield out.take();
  }
}
