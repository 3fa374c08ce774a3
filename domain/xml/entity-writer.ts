// Entity records: one `entity` document, or a stream of them under
// `entities` (the snapshot export), one chunk per record.

import type { EntityRecord, Part, XmlVersion } from '../model.ts';
import { xmlDateTime } from './date-time.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { V1_ONLY } from './vocabulary-v1.ts';
import { V2_META } from './vocabulary-v2.ts';
import { entityRefAttributes, writeParts } from './write-items.ts';
import { writeIssue, writeParticipant, writeUser } from './write-metadata.ts';

export function serializeEntity(record: EntityRecord, version: XmlVersion): string {
  const vocab = vocabularyFor(version);
  const out = new Markup();
  writeEntity(out, record, vocab, true);
  return out.take();
}

export async function* writeEntities(records: AsyncIterable<EntityRecord>, version: XmlVersion): AsyncGenerator<string> {
  const vocab = vocabularyFor(version);
  const out = new Markup();
  yield out.openDocument(vocab.root.entities, vocab).take();
  for await (const record of records) {
    writeEntity(out, record, vocab, false);
    yield out.take();
  }
  yield out.close(vocab.root.entities).take();
}

/**
 * The formats have no field for the preferred name: a reader takes the first
 * PT_NAME part. So the preferred part is moved ahead of the other names.
 */
export function partsInOutputOrder(record: EntityRecord): readonly Part[] {
  const { parts, preferredNamePart } = record;
  if (preferredNamePart === undefined) return parts;
  const preferred = parts.findIndex((part) => part.type === 'PT_NAME' && part.partUuid === preferredNamePart);
  const firstName = parts.findIndex((part) => part.type === 'PT_NAME');
  if (preferred <= firstName) return parts;
  const ordered = parts.filter((_, index) => index !== preferred);
  ordered.splice(firstName, 0, parts[preferred] as Part);
  return ordered;
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
