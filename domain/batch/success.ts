import type { BatchSuccess } from '../model.ts';
import type { BatchPlan, PlannedRecord } from './types.ts';

/** The success document of a plan applied (or, for a test batch, that would be) as transaction `transactionUuid`. */
export function batchSuccess(plan: BatchPlan, transactionUuid: string): BatchSuccess {
  return { outcome: 'success', transactionUuid, revisions: plan.records.map(successRevision) };
}

/** What the success document says of one planned record. */
export function successRevision(record: PlannedRecord): BatchSuccess['revisions'][number] {
  return {
    localId: record.localId,
    entityId: record.after.entityId,
    entityUuid: record.after.entityUuid,
    rev: record.after.revision.rev,
    metadataRev: record.after.revision.metadataRev,
  };
}
