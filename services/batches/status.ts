import type { BatchResult } from '../../domain/model.ts';
import type { BatchRow } from './store.ts';

export interface BatchStatusView {
  updateRequestId: string;
  status: BatchRow['status'];
  changesTotal: number | null;
  changesApplied: number;
  submittedAt: string;
  finishedAt: string | null;
}

export function batchStatusView(batch: BatchRow): BatchStatusView {
  return {
    updateRequestId: batch.id,
    status: batch.status,
    changesTotal: batch.changesTotal,
    changesApplied: batch.changesApplied,
    submittedAt: toIso(batch.submittedAt),
    finishedAt: batch.finishedAt === null ? null : toIso(batch.finishedAt),
  };
}

/** The outcome to show for a finished batch; a batch that failed outside the rules gets one ERROR issue saying why. */
export function batchOutcome(batch: BatchRow): BatchResult {
  if (batch.result) return batch.result;
  return {
    outcome: 'failure',
    entities: [
      {
        issues: [
          {
            uuid: '00000000-0000-4000-8000-000000000000',
            severity: 'ERROR',
            issueCode: 'ProcessingFailed',
            message: batch.error ?? 'the batch could not be processed',
          },
        ],
      },
    ],
  };
}

/** The ORM's pool hands timestamps back as text; either way the API answers ISO 8601 in UTC. */
function toIso(value: Date | string): string {
  return new Date(value).toISOString();
}
