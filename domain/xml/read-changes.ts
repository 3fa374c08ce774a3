// Batch header, createEntity / updateEntity and the change elements, which the
// revisions export shares (under partly different v1 names).

import type {
  BatchEntityRef,
  BatchHeader,
  CreateEntityCommand,
  EntityTarget,
  Issue,
  Part,
  RecordChange,
  UpdateEntityCommand,
  UserInfo,
} from '../model.ts';
import type { XmlElement } from './element-stream.ts';
import { isPartsElement, readItemRef, readItems, readPart, readPartRef, readParts, readTarget } from './read-items.ts';
import { readIssue, readIssueStatus, readParticipant, readUser } from './read-metadata.ts';
import {
  attribute,
  invalid,
  optional,
  optionalLongAttribute,
  parseLong,
  parseState,
  requiredAttribute,
  text,
  token,
  withoutChildren,
  unexpected,
  type ReadContext,
} from './read-support.ts';
import type { SharedChangeOp } from './vocabulary.ts';
import { V1_ONLY } from './vocabulary-v1.ts';
import { V2_META } from './vocabulary-v2.ts';

type ChangeNames = Readonly<Record<SharedChangeOp, string>>;

const opsByTable = new WeakMap<ChangeNames, ReadonlyMap<string, SharedChangeOp>>();

function opOf(name: string, table: ChangeNames): SharedChangeOp | undefined {
  let ops = opsByTable.get(table);
  if (ops === undefined) {
    ops = new Map(Object.entries(table).map(([op, element]) => [element, op as SharedChangeOp]));
    opsByTable.set(table, ops);
  }
  return ops.get(name);
}

/** One change element, or undefined when the element is not a change of this table. */
export function readRecordChange(element: XmlElement, context: ReadContext, table: ChangeNames): RecordChange | undefined {
  const vocab = context.vocab;
  const op = opOf(element.name, table);
  switch (op) {
    case 'newPart':
      return { op, part: readPart(element, vocab) };
    case 'newItems':
    case 'updateItems':
      return { op, part: readPartRef(element, vocab), items: readItems(element, vocab) };
    case 'deletePart':
      return { op, part: readPartRef(withoutChildren(element), vocab) };
    case 'deleteItems':
      return {
        op,
        part: readPartRef(element, vocab),
        items: element.children.map((child) => {
          if (child.name !== vocab.item.itemRef) throw unexpected(child, element);
          return readItemRef(withoutChildren(child), vocab);
        }),
      };
    case 'setEntityType':
      return { op, entityType: token(element) };
    case 'setPreferredName':
      return { op, partUuid: token(element) };
    case 'setState':
      return readSetState(element, context);
    case undefined:
      return vocab.version === 'v2' ? readMetadataChange(element, context) : undefined;
  }
}

function readSetState(element: XmlElement, context: ReadContext): RecordChange {
  const names = context.vocab.setState;
  let state: XmlElement | undefined;
  let replacement: EntityTarget | undefined;
  for (const child of element.children) {
    if (child.name === names.state) state = child;
    else if (child.name === names.storedTarget || child.name === names.localTarget) {
      replacement = readTarget(child, names.storedTarget, names.localTarget, context.vocab);
    } else throw unexpected(child, element);
  }
  if (state === undefined) throw invalid(element, `${element.name} needs ${names.state}`);
  return { op: 'setState', state: parseState(state, text(state)), ...optional('replacement', replacement) };
}

function readMetadataChange(element: XmlElement, context: ReadContext): RecordChange | undefined {
  switch (element.name) {
    case V2_META.addParticipant:
      return { op: 'addParticipant', participant: readParticipant(element, context) };
    case V2_META.addIssue:
      return { op: 'addIssue', issue: readIssue(element, context) as Issue };
    case V2_META.removeIssue:
      return { op: 'removeIssue', issueUuid: token(element) };
    case V2_META.addIssueStatus: {
      const { status, issueUuid } = readIssueStatus(element, context);
      if (issueUuid === undefined) throw invalid(element, `${element.name} needs issueUuid`);
      return { op: 'addIssueStatus', issueUuid, status };
    }
    default:
      return undefined;
  }
}

/** The parts list of a createEntity or newEntity; no list means no parts. */
export function readNewEntityParts(element: XmlElement, context: ReadContext): Part[] {
  let parts: Part[] = [];
  for (const child of element.children) {
    if (isPartsElement(child, context.vocab)) parts = readParts(child, context.vocab);
    else throw unexpected(child, element);
  }
  return parts;
}

export function readCreate(element: XmlElement, context: ReadContext): CreateEntityCommand {
  const names = context.vocab.batch;
  return {
    kind: 'create',
    localId: requiredAttribute(element, names.localId),
    entityType: requiredAttribute(element, names.entityType),
    ...optional('entityUuid', attribute(element, names.entityUuid)),
    parts: readNewEntityParts(element, context),
  };
}

export function readUpdate(element: XmlElement, context: ReadContext): UpdateEntityCommand {
  const [target, ...rest] = element.children;
  if (target === undefined) throw invalid(element, `${element.name} is empty`);
  const entity = readBatchEntityRef(target, element, context);
  if (rest.length === 0) throw invalid(element, `${element.name} needs at least one change`);
  const changes = rest.map((child) => readRecordChange(child, context, context.vocab.updateChange) ?? throwUnexpected(child, element));
  return { kind: 'update', entity, changes };
}

function readBatchEntityRef(element: XmlElement, parent: XmlElement, context: ReadContext): BatchEntityRef {
  const names = context.vocab.batch;
  if (element.name === names.storedEntity) {
    const entityId = optionalLongAttribute(element, context.vocab.id.entityId);
    const entityUuid = attribute(element, context.vocab.id.entityUuid);
    if (entityId === undefined && entityUuid === undefined) {
      throw invalid(element, `${element.name} needs ${context.vocab.id.entityId} or ${context.vocab.id.entityUuid}`);
    }
    return {
      kind: 'stored',
      localId: requiredAttribute(element, names.localId),
      ...optional('entityId', entityId),
      ...optional('entityUuid', entityUuid),
      rev: requiredAttribute(element, names.rev),
      ...optional('metadataRev', context.vocab.version === 'v2' ? attribute(element, V2_META.metadataRev) : undefined),
    };
  }
  if (element.name === names.localEntity) return { kind: 'local', localId: token(element) };
  throw invalid(element, `${parent.name} must start with ${names.storedEntity} or ${names.localEntity}, not ${element.name}`);
}

export function readHeader(element: XmlElement, context: ReadContext): BatchHeader {
  const vocab = context.vocab;
  const batchUuid = attribute(element, vocab.batch.batchUuid);
  const [first, second] = element.children;
  if (first === undefined) throw invalid(element, `${element.name} needs the sender`);
  if (second !== undefined) throw unexpected(second, element);
  let sender: UserInfo;
  if (vocab.version === 'v2') {
    if (first.name !== V2_META.sender) throw unexpected(first, element);
    sender = readUser(first, context);
  } else {
    sender = readV1Sender(first, element);
  }
  return { version: vocab.version, ...optional('batchUuid', batchUuid), sender };
}

/**
 * v1 names the sender by a name (usr) or by the person entity (usid). The
 * model needs id and name, so the one value stands for both.
 */
function readV1Sender(element: XmlElement, parent: XmlElement): UserInfo {
  if (element.name === V1_ONLY.userName) return { id: text(element), name: text(element) };
  if (element.name === V1_ONLY.userEntity) {
    const entityId = parseLong(element, text(element), V1_ONLY.userEntity);
    return { id: String(entityId), name: String(entityId), entityId };
  }
  throw unexpected(element, parent);
}

function throwUnexpected(child: XmlElement, parent: XmlElement): never {
  throw unexpected(child, parent);
}
