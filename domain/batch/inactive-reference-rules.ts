// The warning about a reference the batch adds to an entity that ends the
// batch inactive: which references a version of a record adds, and when one
// of them is a warning.

import {
  BATCH_ISSUE_CODES,
  type EntityRecord,
  type EntityRef,
  type EntityState,
  type EntityTarget,
  type ItemRef,
  type Part,
  type PartRef,
} from '../model.ts';
import { describeRef, itemRefOf, partRefOf, type Problem } from './issues.ts';
import { partItems } from './parts.ts';
import { isActive } from './state-rules.ts';
import type { DrainedRule, PlanFacts } from './types.ts';

/** What refers to another entity: an entityRef item of some type, or the record's replacement. */
type ReferenceSubject = { kind: 'item'; itemType: string } | { kind: 'replacement' };

/** A reference the batch adds, to be judged on the state its target ends the batch in. */
interface AddedReference {
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
function forEachAddedReference(record: EntityRecord, before: EntityRecord | undefined, visit: (reference: AddedReference) => void): void {
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
function inactiveReference(reference: AddedReference, targetState: EntityState, createdAs: () => string | undefined): Problem | undefined {
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

/**
 * Every reference a final record adds, judged on the state its target ends
 * the batch in: a target a later command may still change is judged at the
 * end of the batch.
 */
export const inactiveReferenceRule: DrainedRule = {
  name: 'ReferenceToInactiveEntity',
  severity: 'WARNING',
  check({ record, before }, facts, later) {
    const problems: Problem[] = [];
    forEachAddedReference(record, before, (reference) => {
      if (facts.target(reference.ref)?.final === false) later(() => judgeReference(reference, facts));
      else {
        const problem = judgeReference(reference, facts);
        if (problem !== undefined) problems.push(problem);
      }
    });
    return problems;
  },
};

function judgeReference(reference: AddedReference, facts: PlanFacts): Problem | undefined {
  const target = facts.target(reference.ref);
  return target === undefined ? undefined : inactiveReference(reference, target.state, () => target.createdAs());
}
