import type { BatchSuccess } from '../model.ts';
import type { BatchPlan } from './types.ts';

/** The success document of a plan applied (or, for a test batch, that would be) as transaction `transactionUuid`. */
export function batchSuccess(plan: BatchPlan, transactionUuid: string): BatchSuccess {
  return {
    outcome: 'success',
    transactionUuid,
    revisions: plan.records.map((record) => ({
      localId: record.localId,
      entityId: record.after.entityId,
      entityUuid: record.after.entityUuid,
      rev: record.after.revision.rev,
      metadataRev: record.after.revision.metadataRev,
    })),
  };
}
