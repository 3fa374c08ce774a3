// The entity document and element written by the generic Markup writer: the
// reference the compiled entity writer (domain/xml/compiled-entity-writer.ts)
// is held to byte for byte.

import type { EntityRecord, XmlVersion } from '../../domain/model.ts';
import { partsInOutputOrder } from '../../domain/xml/compiled-entity-writer.ts';
import { xmlDateTime } from '../../domain/xml/date-time.ts';
import { Markup } from '../../domain/xml/markup.ts';
import { vocabularyFor, type Vocabulary } from '../../domain/xml/vocabulary.ts';
import { V1_ONLY } from '../../domain/xml/vocabulary-v1.ts';
import { V2_META } from '../../domain/xml/vocabulary-v2.ts';
import { entityRefAttributes, writeParts } from '../../domain/xml/write-items.ts';
import { writeIssue, writeParticipant, writeUser } from '../../domain/xml/write-metadata.ts';

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
  out
    .open(names.revision)
    .leaf(names.rev, revision.rev)
    .leaf(V2_META.metadataRev, revision.metadataRev)
    .leaf(V2_META.prevRev, revision.prevRev);
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
