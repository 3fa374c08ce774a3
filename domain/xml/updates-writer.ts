// Lists of updated records: updates / ups, and updatesFrom / upsf with its
// summary. Rows are tiny, so they come in pages (a cursor read each) and are
// sent in chunks of many rows; a walk of the whole feed writes a million of
// them, so each is one template, not a generic element.

import type { RevisionPointer, UpdatesFromInfo, XmlVersion } from '../model.ts';
import { escapeAttribute } from './escape.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { V2_META } from './vocabulary-v2.ts';

const CHUNK_CHARACTERS = 16 * 1024;

export async function* writeUpdates(pointers: AsyncIterable<readonly RevisionPointer[]>, version: XmlVersion): AsyncGenerator<string> {
  const vocab = vocabularyFor(version);
  const out = new Markup().openDocument(vocab.root.updates, vocab);
  yield* writePointers(out, pointers, vocab);
  yield out.close(vocab.root.updates).take();
}

/** Without pointers the document holds only the summary (too many updates to list). */
export async function* writeUpdatesFrom(
  info: UpdatesFromInfo,
  pointers: AsyncIterable<readonly RevisionPointer[]> | undefined,
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
async function* writePointers(out: Markup, pages: AsyncIterable<readonly RevisionPointer[]>, vocab: Vocabulary): AsyncGenerator<string> {
  const line = pointerLine(vocab);
  let text = out.take();
  for await (const page of pages) {
    for (const pointer of page) {
      text += line(pointer);
      if (text.length >= CHUNK_CHARACTERS) {
        yield text;
        text = '';
      }
    }
  }
  out.append(text);
}

/** One revInfo (v2) or ri (v1) element, as Markup's empty() would write it. */
function pointerLine(vocab: Vocabulary): (pointer: RevisionPointer) => string {
  const names = vocab.updates;
  const start = `<${names.revInfo} ${vocab.id.entityId}="`;
  const uuid = `" ${vocab.id.entityUuid}="`;
  const rev = `" ${names.rev}="`;
  const metadataRev = `" ${V2_META.metadataRev}="`;
  const withMetadataRev = vocab.version === 'v2';
  return (pointer) =>
    `${start}${pointer.entityId}${uuid}${escapeAttribute(pointer.entityUuid)}${rev}${escapeAttribute(pointer.rev)}${
      withMetadataRev && pointer.metadataRev !== undefined ? `${metadataRev}${escapeAttribute(pointer.metadataRev)}` : ''
    }"/>`;
}
