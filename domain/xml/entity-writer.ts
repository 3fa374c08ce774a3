// Entity records: one `entity` document, or a stream of them under
// `entities` (the snapshot export), one chunk per record. Both are written
// by the compiled writer (compiled-entity-writer.ts), held byte for byte to
// the Markup writer here.

import type { EntityRecord, XmlVersion } from '../model.ts';
import { xmlDateTime } from './date-time.ts';
import { entityElementWriter, partsInOutputOrder } from './compiled-entity-writer.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { V1_ONLY } from './vocabulary-v1.ts';
import { V2_META } from './vocabulary-v2.ts';
import { entityRefAttributes, writeParts } from './write-items.ts';
import { writeIssue, writeParticipant, writeUser } from './write-metadata.ts';

export { partsInOutputOrder };

/**
 * One entity document (GET of a record): the compiled element of the export
 * (compiled-entity-writer.ts) behind the declaration, its root start tag
 * carrying the version's namespace. Byte for byte serializeEntityByMarkup.
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

/** The entity document by the Markup writer: the reference serializeEntity is held to. */
export function serializeEntityByMarkup(record: EntityRecord, version: XmlVersion): string {
  const vocab = vocabularyFor(version);
  const out = new Markup();
  writeEntity(out, record, vocab, true);
  return out.take();
}

/**
 * One entity element (no declaration) by the Markup writer: the reference the
 * compiled writer of the export streams is held to.
 */
export function serializeEntityElement(record: EntityRecord, version: XmlVersion): string {
  const out = new Markup();
  writeEntity(out, record, vocabularyFor(version), false);
  return out.take();
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

function writeEntity(out: Markup, record: EntityRecord, vocab: Vocabulary, asDocument: boolean): void {
  const root = vocab.root.entity;
  const names = vocab.entity;
  const attributes = [
    [vocab.id.entityId, record.entityId],
    [vocab.id.entityUuid, record.entityUuid],
    [names.entityType, record.entityType],
    [names.state, record.state],
    ...(vocab.version === 'v1'
      ? ([
          [V1_ONLY.replacedById, record.replacedBy?.entityId],
          [V1_ONLY.replacedByUuid, record.replacedBy?.entityUuid],
        ] as const)
      : []),
  ] as const;
  if (asDocument) out.openDocument(root, vocab, attributes);
  else out.open(root, attributes);

  if (vocab.version === 'v2') writeRevisionInfoV2(out, record, vocab);
  else writeRevisionInfoV1(out, record, vocab);
  writeParts(out, partsInOutputOrder(record), vocab);

  if (vocab.version === 'v2') {
    if (record.issues.length > 0) {
      out.open(V2_META.issues);
      for (const issue of record.issues) writeIssue(out, V2_META.issue, issue, issue);
      out.close(V2_META.issues);
    }
    if (record.replacedBy !== undefined) out.empty(V2_META.replacedBy, entityRefAttributes(record.replacedBy, vocab));
  }
  out.close(root);
}

function writeRevisionInfoV2(out: Markup, record: EntityRecord, vocab: Vocabulary): void {
  const revision = record.revision;
  const names = vocab.entity;
  out.open(names.revision).leaf(names.rev, revision.rev).leaf(V2_META.metadataRev, revision.metadataRev).leaf(V2_META.prevRev, revision.prevRev);
  if (revision.user !== undefined) writeUser(out, V2_META.user, revision.user);
  out.leaf(names.createdAt, xmlDateTime(revision.createdAt));
  for (const participant of revision.participants) writeParticipant(out, V2_META.participant, participant);
  out.close(names.revision);
}

/** v1 RevInfo knows the user only by name (usr) and person entity (usid). */
function writeRevisionInfoV1(out: Markup, record: EntityRecord, vocab: Vocabulary): void {
  const { rev, user, createdAt } = record.revision;
  const names = vocab.entity;
  out.open(names.revision).leaf(names.rev, rev).leaf(V1_ONLY.userName, user?.name);
  if (user?.entityId !== undefined) out.empty(V1_ONLY.userEntity, [[vocab.id.entityId, user.entityId]]);
  out.leaf(names.createdAt, xmlDateTime(createdAt)).close(names.revision);
}
