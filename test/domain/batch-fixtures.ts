// Small factories for the batch planning tests, and the check of a plan that only warns.

import { expect } from 'vitest';

import type { BatchPlan, EntitySummary, PlanEnv } from '../../domain/batch/index.ts';
import type { LoadedWorld } from '../../engine/batch/index.ts';
import { createBatchWorld, planBatch } from '../support/batch-planning.ts';
import type { CreateEntityCommand, EntityRecord, Issue, Item, Part, RecordChange, UpdateEntityCommand } from '../../domain/model.ts';

export const NOW = '2025-03-01T10:00:00.000Z';
export const USER = { id: 'clerk-7', name: 'Jana Clerk' };

/** Deterministic UUIDs (valid v4 shape) and entityIds from 1000 up. */
export function testEnv(): PlanEnv {
  let uuid = 0;
  let entityId = 1000;
  return {
    newUuid: () => `00000000-0000-4000-8000-${String(++uuid).padStart(12, '0')}`,
    allocateEntityId: () => entityId++,
    now: NOW,
    user: USER,
  };
}

export function str(type: string, value: string, extra: Partial<Pick<Item, 'uuid' | 'spec'>> = {}): Item {
  return { kind: 'string', type, value, ...extra };
}

export function namePart(partUuid: string, main: string, minor?: string): Part {
  const items = [str('NM_MAIN', main, { uuid: `${partUuid}-main` })];
  if (minor !== undefined) items.push(str('NM_MINOR', minor, { uuid: `${partUuid}-minor` }));
  return { partUuid, type: 'PT_NAME', items };
}

export function bodyPart(partUuid: string, description: string): Part {
  return { partUuid, type: 'PT_BODY', items: [str('BRIEF_DESC', description, { uuid: `${partUuid}-desc` })] };
}

export function storedRecord(overrides: Partial<EntityRecord> = {}): EntityRecord {
  return {
    entityId: 1,
    entityUuid: 'aaaaaaaa-0000-4000-8000-000000000001',
    entityType: 'PERSON',
    state: 'ERS_APPROVED',
    revision: {
      rev: 'rev-1',
      metadataRev: 'meta-1',
      prevRev: 'rev-0',
      user: { id: 'old-user', name: 'Old User' },
      createdAt: '2024-01-01T00:00:00.000Z',
      participants: [],
    },
    parts: [namePart('name-1', 'Novák', 'Jan'), bodyPart('body-1', 'painter')],
    issues: [],
    ...overrides,
  };
}

export function summary(entityId: number, state: EntitySummary['state'] = 'ERS_APPROVED'): EntitySummary {
  return { entityId, entityUuid: `bbbbbbbb-0000-4000-8000-${String(entityId).padStart(12, '0')}`, state };
}

export function create(localId: string, parts: Part[], extra: Partial<CreateEntityCommand> = {}): CreateEntityCommand {
  return { kind: 'create', localId, entityType: 'PERSON', parts, ...extra };
}

export function updateStored(
  localId: string,
  record: EntityRecord,
  changes: RecordChange[],
  rev = record.revision.rev,
): UpdateEntityCommand {
  return { kind: 'update', entity: { kind: 'stored', localId, entityId: record.entityId, rev }, changes };
}

export function updateLocal(localId: string, changes: RecordChange[]): UpdateEntityCommand {
  return { kind: 'update', entity: { kind: 'local', localId }, changes };
}

export function world(loaded: LoadedWorld = {}) {
  return createBatchWorld(loaded);
}

export function allIssues(plan: BatchPlan): (Issue & { localId: string | undefined })[] {
  return plan.issues.flatMap((group) => group.issues.map((issue) => ({ ...issue, localId: group.localId })));
}

/** The plan's one issue is a warning with these fields (and more), and it has no error. */
export function expectOnlyWarning(plan: BatchPlan, warning: Partial<Issue> & { localId: string; issueCode: string }): void {
  expect(plan.hasErrors).toBe(false);
  expect(plan.hasWarnings).toBe(true);
  expect(allIssues(plan)).toEqual([expect.objectContaining({ severity: 'WARNING', ...warning })]);
}

export function codes(plan: BatchPlan): (string | undefined)[] {
  return allIssues(plan).map((issue) => issue.issueCode);
}

/** One update of the record, planned alone over a world that holds it. */
export function planUpdate(changes: RecordChange[], record: EntityRecord = storedRecord()): BatchPlan {
  return planBatch([updateStored('s1', record, changes)], world({ records: [record] }), testEnv());
}

/** A relation part whose one item refers to the entity of this localId. */
export const relTo = (localId: string): Part => ({
  partUuid: '',
  type: 'PT_REL',
  items: [{ kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'local', localId } }],
});

export const replacedBy = (entityId: number): RecordChange => ({
  op: 'setState',
  state: 'ERS_REPLACED',
  replacement: { kind: 'stored', ref: { entityId } },
});
