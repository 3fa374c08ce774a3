// Entity records: one `entity` document, or a stream of them under
// `entities` (the snapshot export), one chunk per record. Both are written
// by the compiled writer (compiled-entity-writer.ts), behind the opening the
// Markup writer gives each.

import type { EntityRecord, XmlVersion } from '../model.ts';
import { entityElementWriter } from './compiled-entity-writer.ts';
import { Markup } from './markup.ts';
import { vocabularyFor } from './vocabulary.ts';

/**
 * One entity document (GET of a record): the compiled element of the export
 * (compiled-entity-writer.ts) behind the declaration, its root start tag
 * carrying the version's namespace.
 */
export function serializeEntity(record: EntityRecord, version: XmlVersion): string {
  let writer = documentWriters.get(version);
  if (writer === undefined) {
    writer = entityDocumentWriter(version);
    documentWriters.set(version, writer);
  }
  return writer(record);
}

const documentWriters = new Map<XmlVersion, (record: EntityRecord) => string>();

function entityDocumentWriter(version: XmlVersion): (record: EntityRecord) => string {
  const element = entityElementWriter(version);
  const opening = entityOpenings(version);
  return (record) => opening.document + element(record).slice(opening.element.length);
}

/**
 * How an entity's document and its element in an entities document begin:
 * the element starts `<entity` and its attributes, the document the
 * declaration and the same start tag with the namespace first
 * (Markup.openDocument). After these the two are the same text, so an
 * element is its stored document with `document` replaced by `element`.
 */
export function entityOpenings(version: XmlVersion): { document: string; element: string } {
  const vocab = vocabularyFor(version);
  return { document: new Markup().openDocument(vocab.root.entity, vocab).take().slice(0, -'>'.length), element: `<${vocab.root.entity}` };
}

export async function* writeEntities(records: AsyncIterable<EntityRecord>, version: XmlVersion): AsyncGenerator<string> {
  const { opening, element, closing } = entitiesDocument(version);
  yield opening;
  for await (const record of records) yield element(record);
  yield closing;
}

/** The parts of writeEntities for a caller that drives the loop itself. */
export function entitiesDocument(version: XmlVersion): { opening: string; element: (record: EntityRecord) => string; closing: string } {
  const vocab = vocabularyFor(version);
  return {
    opening: new Markup().openDocument(vocab.root.entities, vocab).take(),
    element: entityElementWriter(version),
    closing: `</${vocab.root.entities}>`,
  };
}
