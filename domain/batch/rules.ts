// The batch rules about one entity, as plain functions: what a create makes,
// which identifiers it may not take, which revision a change gets, and which
// checks a final record must pass. The planner (engine/batch/planner.ts)
// decides when each applies and supplies what it needs to know; these decide
// what the answer is. Changes themselves are apply-change.ts, state changes
// state-rules.ts, the preferred-name warning preferred-names.ts.

import {
  BATCH_ISSUE_CODES,
  type CreateEntityCommand,
  type EntityRecord,
  type EntityRef,
  type EntityState,
  type EntityTarget,
  type ItemRef,
  type Part,
  type PartRef,
  type RecordChange,
  type RevisionInfo,
} from '../model.ts';
import { describeRef, itemRefOf, partRefOf, type Problem } from './issues.ts';
import { partItems } from './parts.ts';
import { isActive } from './state-rules.ts';
import type { PlanEnv, ResolvedRef } from './types.ts';

/** The record a create makes before any later change of the batch: new, in ERS_NEW, with its parts. */
export function createdRecord(command: CreateEntityCommand, ids: ResolvedRef, parts: Part[], now: string): EntityRecord {
  return {
    entityId: ids.entityId,
    entityUuid: ids.entityUuid,
    entityType: command.entityType,
    state: 'ERS_NEW',
    revision: { rev: '', metadataRev: '', createdAt: now, participants: [] },
    parts,
    issues: [],
  };
}

/** A localId names one entity in a batch. */
export function duplicateLocalId(localId: string): Problem {
  return { code: BATCH_ISSUE_CODES.duplicateIdentifier, message: `localId ${localId} is declared more than once in the batch.` };
}

/**
 * A client-given entity UUID a create may not take: one a stored entity
 * holds, or one an earlier create of the batch (named by its localId) uses.
 */
export function createUuidProblem(entityUuid: string, stored: boolean, earlierCreate: string | undefined): Problem | undefined {
  if (stored) return duplicateUuid(entityUuid, 'a stored entity already has it');
  if (earlierCreate !== undefined) return duplicateUuid(entityUuid, `the create ${earlierCreate} of this batch already uses it`);
  return undefined;
}

function duplicateUuid(entityUuid: string, reason: string): Problem {
  return {
    code: BATCH_ISSUE_CODES.duplicateEntityUuid,
    message: `Entity UUID ${entityUuid} cannot be used for a new entity: ${reason}.`,
    entityRef: { entityUuid },
  };
}

/** An update of a local entity that no create or stored reference before it declared. */
export function unknownLocalSubject(localId: string): Problem {
  return {
    code: BATCH_ISSUE_CODES.unknownLocalReference,
    message: `No entity with localId ${localId} is created or referenced earlier in the batch.`,
  };
}

/** A reference to a localId the batch does not declare. */
export function undeclaredLocalId(localId: string): Problem {
  return { code: BATCH_ISSUE_CODES.unknownLocalReference, message: `No entity with localId ${localId} is declared in the batch.` };
}

/** An update of a stored entity that does not exist (or whose two identifiers name different entities). */
export function unknownStoredSubject(ref: EntityRef): Problem {
  return { code: BATCH_ISSUE_CODES.unknownEntity, message: `No stored entity matches ${describeRef(ref)}.`, entityRef: ref };
}

/** A reference to an entity that neither the batch nor the store has. */
export function unknownTarget(ref: EntityRef): Problem {
  return { code: BATCH_ISSUE_CODES.unknownEntity, message: `No entity matches ${describeRef(ref)}.`, entityRef: ref };
}

/** An update names the rev it is based on; against the rev at batch start, so later updates of the same entity name the same rev. */
export function staleRevision(basedOn: string, record: EntityRecord): Problem | undefined {
  if (record.revision.rev === basedOn) return undefined;
  return {
    code: BATCH_ISSUE_CODES.staleRevision,
    message: `The update is based on revision ${basedOn}, but the current revision of entity ${record.entityId} is ${record.revision.rev}.`,
    entityRef: { entityId: record.entityId, entityUuid: record.entityUuid },
  };
}

/** A new entity needs a name; an update may not remove the last one. */
export function namePartProblem(record: EntityRecord, before: EntityRecord | undefined, isNew: boolean): Problem | undefined {
  const hasName = (candidate: EntityRecord) => candidate.parts.some((part) => part.type === 'PT_NAME');
  if (hasName(record) || (before !== undefined && !hasName(before))) return undefined;
  return {
    code: BATCH_ISSUE_CODES.missingNamePart,
    message: isNew ? 'A new entity needs at least one PT_NAME part.' : 'The batch removes the last PT_NAME part of the entity.',
    partRef: { type: 'PT_NAME' },
  };
}

/** What refers to another entity: an entityRef item of some type, or the record's replacement. */
type ReferenceSubject = { kind: 'item'; itemType: string } | { kind: 'replacement' };

/** A reference the batch adds, to be judged on the state its target ends the batch in. */
export interface AddedReference {
  ref: EntityRef;
  subject: ReferenceSubject;
  partRef?: PartRef;
  itemRef?: ItemRef;
}

/**
 * The references to stored entities that this version of the record adds or
 * changes: warning about every old reference of a record would make any later
 * edit of it need force.
 */
export function forEachAddedReference(
  record: EntityRecord,
  before: EntityRecord | undefined,
  visit: (reference: AddedReference) => void,
): void {
  const existing = new Set<string>();
  for (const part of before?.parts ?? []) {
    for (const item of partItems(part)) if (item.kind === 'entityRef') existing.add(referenceKey(part, item));
  }
  for (const part of record.parts) {
    for (const item of partItems(part)) {
      if (item.kind !== 'entityRef' || item.target.kind !== 'stored' || existing.has(referenceKey(part, item))) continue;
      visit({
        ref: item.target.ref,
        subject: { kind: 'item', itemType: item.type },
        partRef: partRefOf(part.type, part.partUuid),
        itemRef: itemRefOf(item),
      });
    }
  }
  if (record.replacedBy !== undefined && before?.state !== 'ERS_REPLACED')
    visit({ ref: record.replacedBy, subject: { kind: 'replacement' } });
}

function referenceKey(part: Part, item: { uuid?: string; type: string; spec?: string; target: EntityTarget }): string {
  const target =
    item.target.kind === 'stored' ? `${item.target.ref.entityId ?? ''}/${item.target.ref.entityUuid ?? ''}` : item.target.localId;
  return [part.partUuid, item.uuid ?? '', item.type, item.spec ?? '', target].join('|');
}

/**
 * A reference to an entity that ends the batch inactive is a warning.
 * Warnings must read the same on every attempt of a batch, or its force key
 * would never match: an entity created by the batch is therefore named by its
 * localId (`createdAs`, asked only for a warning), not by the ids allocated
 * for this attempt.
 */
export function inactiveReference(
  reference: AddedReference,
  targetState: EntityState,
  createdAs: () => string | undefined,
): Problem | undefined {
  if (isActive(targetState)) return undefined;
  const createdLocalId = createdAs();
  const about = reference.subject;
  const subject = (target: string) =>
    about.kind === 'item' ? `Item ${about.itemType} refers to ${target}, which` : `The replacement, ${target},`;
  const code = BATCH_ISSUE_CODES.referenceToInactiveEntity;
  const problem: Problem =
    createdLocalId === undefined
      ? { code, message: `${subject(describeRef(reference.ref))} is in state ${targetState}.`, entityRef: reference.ref }
      : { code, message: `${subject(`the entity created as localId ${createdLocalId}`)} is in state ${targetState}.` };
  if (reference.partRef !== undefined) problem.partRef = reference.partRef;
  if (reference.itemRef !== undefined) problem.itemRef = reference.itemRef;
  return problem;
}

/** A content change starts a new rev (and metadataRev); a metadata-only change keeps rev, its time and user. */
export function nextRevision(
  previous: RevisionInfo | undefined,
  contentChanged: boolean,
  participants: RevisionInfo['participants'],
  env: PlanEnv,
): RevisionInfo {
  if (previous !== undefined && !contentChanged) return { ...previous, metadataRev: env.newUuid(), participants };
  const revision: RevisionInfo = {
    rev: env.newUuid(),
    metadataRev: env.newUuid(),
    user: structuredClone(env.user),
    createdAt: env.now,
    participants,
  };
  if (previous !== undefined) revision.prevRev = previous.rev;
  return revision;
}

/** An issue this revision adds is from this revision's rev. */
export function dateAddedIssues(record: EntityRecord, changes: readonly RecordChange[]): void {
  const added = new Set(changes.flatMap((change) => (change.op === 'addIssue' ? [change.issue.uuid] : [])));
  for (const issue of record.issues) if (added.has(issue.uuid)) issue.fromRev = record.revision.rev;
}
