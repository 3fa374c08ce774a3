// The PreferredNameExists warning, a second pure step: planBatch cannot see
// which stored entities hold a name, so the caller queries the holders of the
// keys this step asks for and passes them back in.

import { BATCH_ISSUE_CODES, type EntityRecord, type Issue } from '../model.ts';
import { normalizeForSearch, preferredName, preferredNamePart } from '../text.ts';
import { hasSeverity, IssueLog, partRefOf, toIssue } from './issues.ts';
import { isActive } from './state-rules.ts';
import type { BatchPlan, PlannedRecord } from './types.ts';

export interface PreferredNameKey {
  localId: string;
  entityId: number;
  entityType: string;
  /** normalizeForSearch of the display form of the preferred name. */
  normalizedName: string;
}

/**
 * entityIds of stored entities whose current preferred name has this key.
 * The caller's query must leave out entities in ERS_INVALID or ERS_REPLACED:
 * they hold no name.
 */
export type NameHolders = (entityType: string, normalizedName: string) => readonly number[];

function keyOf(record: EntityRecord): { entityType: string; normalizedName: string } | undefined {
  if (!isActive(record.state)) return undefined;
  const normalizedName = normalizeForSearch(preferredName(record));
  return normalizedName === '' ? undefined : { entityType: record.entityType, normalizedName };
}

const keyString = (entityType: string, normalizedName: string) => `${entityType}\u0000${normalizedName}`;

/** Keys to check: records that are new, or whose type, preferred name or activity changed. */
export function preferredNameKeys(plan: BatchPlan): PreferredNameKey[] {
  const keys: PreferredNameKey[] = [];
  for (const record of plan.records) {
    const after = keyOf(record.after);
    if (after === undefined) continue;
    const before = record.before === undefined ? undefined : keyOf(record.before);
    if (before !== undefined && before.entityType === after.entityType && before.normalizedName === after.normalizedName) continue;
    keys.push({ localId: record.localId, entityId: record.after.entityId, ...after });
  }
  return keys;
}

/**
 * Adds a PreferredNameExists warning to every checked record whose name is
 * also held by another entity: a stored holder that this batch does not move
 * off the name, or another record of this batch.
 */
export function addPreferredNameWarnings(plan: BatchPlan, holders: NameHolders, newUuid: () => string): BatchPlan {
  const planned = new Map<number, PlannedRecord>();
  const plannedByKey = new Map<string, PlannedRecord[]>();
  for (const record of plan.records) {
    planned.set(record.after.entityId, record);
    const key = keyOf(record.after);
    if (key === undefined) continue;
    const k = keyString(key.entityType, key.normalizedName);
    plannedByKey.set(k, [...(plannedByKey.get(k) ?? []), record]);
  }

  const log = new IssueLog(plan.issues);
  for (const key of preferredNameKeys(plan)) {
    const k = keyString(key.entityType, key.normalizedName);
    // Holders reflect the database before the batch; for entities of the batch their planned form decides.
    const stored = [...new Set(holders(key.entityType, key.normalizedName))]
      .filter((entityId) => !planned.has(entityId))
      .sort((x, y) => x - y);
    const inBatch = (plannedByKey.get(k) ?? []).filter((record) => record.after.entityId !== key.entityId);
    const record = planned.get(key.entityId);
    if (record === undefined || (stored.length === 0 && inBatch.length === 0)) continue;
    log.add(key.localId, [nameWarning(record, stored, inBatch, newUuid)]);
  }
  const issues = log.groups();
  return { ...plan, issues, hasErrors: hasSeverity(issues, 'ERROR'), hasWarnings: hasSeverity(issues, 'WARNING') };
}

/** Batch records are named by localId (new ones have per-attempt ids), stored holders by entityId: see the force key. */
function nameWarning(record: PlannedRecord, stored: number[], inBatch: PlannedRecord[], newUuid: () => string): Issue {
  const others = [
    ...stored.map((entityId) => `entity ${entityId}`),
    ...inBatch.map((other) => (other.isNew ? `the entity created as localId ${other.localId}` : `entity ${other.after.entityId}`)),
  ];
  const part = preferredNamePart(record.after);
  const [first] = stored;
  const firstStoredInBatch = inBatch.find((other) => !other.isNew);
  const entityId = first ?? firstStoredInBatch?.after.entityId;
  return toIssue(
    {
      code: BATCH_ISSUE_CODES.preferredNameExists,
      message: `Another entity of type ${record.after.entityType} already has the preferred name "${preferredName(record.after)}": ${others.join(', ')}.`,
      ...(part === undefined ? {} : { partRef: partRefOf(part.type, part.partUuid) }),
      ...(entityId === undefined ? {} : { entityRef: { entityId } }),
    },
    'WARNING',
    newUuid,
  );
}
