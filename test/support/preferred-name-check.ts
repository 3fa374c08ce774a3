// The PreferredNameExists check over a whole planned batch in memory,
// written from the rule's sentence over the pipeline's rule
// (BATCH_PIPELINE.end): the reference the apply's staged check is held to,
// and the check the domain tests plan with.

import type { EntityIssues } from '../../domain/model.ts';
import { hasSeverity, IssueLog } from '../../domain/batch/issues.ts';
import { BATCH_PIPELINE } from '../../domain/batch/pipeline.ts';
import { nameWarning, splitKey } from '../../domain/batch/preferred-names.ts';
import type { BatchPlan } from '../../domain/batch/types.ts';

const rule = BATCH_PIPELINE.end;

export interface PreferredNameKey {
  localId: string;
  entityId: number;
  entityType: string;
  /** normalizeForSearch of the display form of the preferred name. */
  normalizedName: string;
}

/** entityIds of the stored entities in one of the rule's holder states whose current preferred name has this key. */
export type NameHolders = (entityType: string, normalizedName: string) => readonly number[];

const entriesOf = (plan: BatchPlan) => plan.records.flatMap((record) => rule.entryOf(record) ?? []);

/** The keys checked against the stored holders: records that are new, or whose type, preferred name or holding changed. */
export function preferredNameKeys(plan: BatchPlan): PreferredNameKey[] {
  return entriesOf(plan).flatMap((entry) => {
    if (!entry.checked) return [];
    const [entityType, normalizedName] = splitKey(entry.key);
    return [{ localId: entry.localId, entityId: entry.entityId, entityType, normalizedName }];
  });
}

/**
 * A warning for every checked record whose name another entity also holds: a
 * stored holder that the batch does not plan (its planned form decides), or
 * another record of the batch.
 */
export function preferredNameWarnings(plan: BatchPlan, holders: NameHolders, newUuid: () => string): EntityIssues[] {
  const entries = entriesOf(plan);
  const planned = new Set(plan.records.map((record) => record.after.entityId));
  const log = new IssueLog();
  for (const entry of entries) {
    if (!entry.checked) continue;
    const stored = [...new Set(holders(...splitKey(entry.key)))].filter((holder) => !planned.has(holder)).sort((x, y) => x - y);
    const inBatch = entries.filter((other) => other.key === entry.key && other.entityId !== entry.entityId);
    if (stored.length > 0 || inBatch.length > 0) log.add(entry.localId, [nameWarning(entry, stored, inBatch, newUuid)]);
  }
  return log.groups();
}

/** The plan with the warnings of preferredNameWarnings added to its issues. */
export function addPreferredNameWarnings(plan: BatchPlan, holders: NameHolders, newUuid: () => string): BatchPlan {
  const log = new IssueLog(plan.issues);
  for (const group of preferredNameWarnings(plan, holders, newUuid)) log.add(group.localId, group.issues);
  const issues = log.groups();
  return { ...plan, issues, hasErrors: hasSeverity(issues, 'ERROR'), hasWarnings: hasSeverity(issues, 'WARNING') };
}
