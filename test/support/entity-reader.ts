// A single entity document (entity / ent) back into an EntityRecord: for
// round-trip tests and tools; the service itself reads records from its store.

import type { EntityRecord, EntityRef, Part, Participant, RecordIssue, RevisionInfo, UserInfo } from '../../domain/model.ts';
import { readXmlText, xmlError, type XmlElement } from '../../domain/xml/element-stream.ts';
import { isPartsElement, readParts } from '../../domain/xml/read-items.ts';
import { readExternalUser, readIssue, readParticipant } from '../../domain/xml/read-metadata.ts';
import {
  attribute,
  invalid,
  optional,
  optionalLongAttribute,
  parseLong,
  parseState,
  readEntityRef,
  requiredAttribute,
  text,
  token,
  unexpected,
  newReadContext,
  type ReadContext,
} from '../../domain/xml/read-support.ts';
import { versionOfNamespace, vocabularyFor } from '../../domain/xml/vocabulary.ts';
import { V1_ONLY } from '../../domain/xml/vocabulary-v1.ts';
import { V2_META } from '../../domain/xml/vocabulary-v2.ts';

/**
 * The preferred name is not in the formats (the writer puts it first among
 * the PT_NAME parts), so the record comes back without preferredNamePart.
 * v1 has no metadata revision: metadataRev is the rev.
 */
export function readEntity(xml: string): EntityRecord {
  const state: { context?: ReadContext; root?: XmlElement; children: XmlElement[] } = { children: [] };
  readXmlText(xml, {
    root(element, namespace) {
      const version = versionOfNamespace(namespace);
      if (version === undefined || element.name !== vocabularyFor(version).root.entity) {
        throw invalid(element, `expected an entity (entity or ent in its namespace), found {${namespace}}${element.name}`);
      }
      state.context = newReadContext(vocabularyFor(version));
      state.root = element;
    },
    child(element) {
      state.children.push(element);
    },
  });
  const { context, root } = state;
  if (context === undefined || root === undefined) throw xmlError(1, 1, 'the document has no entity');
  return toRecord(root, state.children, context);
}

function toRecord(root: XmlElement, children: readonly XmlElement[], context: ReadContext): EntityRecord {
  const vocab = context.vocab;
  let revision: RevisionInfo | undefined;
  let parts: Part[] = [];
  let issues: RecordIssue[] = [];
  let replacedBy: EntityRef | undefined;
  for (const child of children) {
    if (child.name === vocab.entity.revision) {
      revision = vocab.version === 'v2' ? readRevisionInfoV2(child, context) : readRevisionInfoV1(child, context);
    } else if (isPartsElement(child, vocab)) {
      parts = readParts(child, vocab);
    } else if (vocab.version === 'v2' && child.name === V2_META.issues) {
      issues = child.children.map((issue) => readRecordIssue(issue, child, context));
    } else if (vocab.version === 'v2' && child.name === V2_META.replacedBy) {
      replacedBy = readEntityRef(child, vocab);
    } else {
      throw unexpected(child, root);
    }
  }
  if (vocab.version === 'v1') {
    const entityId = optionalLongAttribute(root, V1_ONLY.replacedById);
    const entityUuid = attribute(root, V1_ONLY.replacedByUuid);
    if (entityId !== undefined || entityUuid !== undefined) {
      replacedBy = { ...optional('entityId', entityId), ...optional('entityUuid', entityUuid) };
    }
  }
  if (revision === undefined) throw invalid(root, `${root.name} needs ${vocab.entity.revision}`);
  return {
    entityId: parseLong(root, requiredAttribute(root, vocab.id.entityId), vocab.id.entityId),
    entityUuid: requiredAttribute(root, vocab.id.entityUuid),
    entityType: requiredAttribute(root, vocab.entity.entityType),
    state: parseState(root, requiredAttribute(root, vocab.entity.state)),
    ...optional('replacedBy', replacedBy),
    revision,
    parts,
    issues,
  };
}

function readRecordIssue(element: XmlElement, parent: XmlElement, context: ReadContext): RecordIssue {
  if (element.name !== V2_META.issue) throw unexpected(element, parent);
  const issue = readIssue(element, context);
  if (!('from' in issue)) throw invalid(element, `${element.name} needs from`);
  return issue;
}

function readRevisionInfoV2(element: XmlElement, context: ReadContext): RevisionInfo {
  const names = context.vocab.entity;
  const fields: { rev?: string; metadataRev?: string; prevRev?: string; createdAt?: string; user?: UserInfo } = {};
  const participants: Participant[] = [];
  for (const child of element.children) {
    if (child.name === names.rev) fields.rev = token(child);
    else if (child.name === V2_META.metadataRev) fields.metadataRev = token(child);
    else if (child.name === V2_META.prevRev) fields.prevRev = token(child);
    else if (child.name === names.createdAt) fields.createdAt = token(child);
    else if (child.name === V2_META.user || child.name === V2_META.userRef) fields.user = readExternalUser(child, context);
    else if (child.name === V2_META.participant) participants.push(readParticipant(child, context));
    else throw unexpected(child, element);
  }
  const { rev, metadataRev, createdAt } = fields;
  if (rev === undefined || metadataRev === undefined || createdAt === undefined) {
    throw invalid(element, `${element.name} needs rev, metadataRev and createdAt`);
  }
  return {
    rev,
    metadataRev,
    ...optional('prevRev', fields.prevRev),
    ...optional('user', fields.user),
    createdAt,
    participants,
  };
}

function readRevisionInfoV1(element: XmlElement, context: ReadContext): RevisionInfo {
  const names = context.vocab.entity;
  let rev: string | undefined;
  let createdAt: string | undefined;
  let userName: string | undefined;
  let userEntity: number | undefined;
  for (const child of element.children) {
    if (child.name === names.rev) rev = token(child);
    else if (child.name === names.createdAt) createdAt = token(child);
    else if (child.name === V1_ONLY.userName) userName = text(child);
    else if (child.name === V1_ONLY.userEntity) userEntity = readEntityRef(child, context.vocab).entityId;
    else throw unexpected(child, element);
  }
  if (rev === undefined || createdAt === undefined) throw invalid(element, `${element.name} needs ${names.rev} and ${names.createdAt}`);
  const name = userName ?? (userEntity === undefined ? undefined : String(userEntity));
  const user = name === undefined ? undefined : { id: name, name, ...optional('entityId', userEntity) };
  return { rev, metadataRev: rev, ...optional('user', user), createdAt, participants: [] };
}
