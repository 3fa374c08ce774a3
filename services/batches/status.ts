import type { BatchFailure, BatchResult } from '../../domain/model.ts';
import type { BatchRow, BatchState } from '../../db/batches.ts';
import type { ServiceDeps } from '../deps.ts';

/** The real registry's RequestProcessState, shared by batches and exports. */
type RequestProcessState = 'PENDING' | 'PROCESSING' | 'FINISHED' | 'ERROR';

/** Exactly what the real client's BatchUpdateStatus / ExportRequestStatus models hold: no other field. */
export interface ProcessStatus {
  state: RequestProcessState;
  progress: number;
}

/**
 * A batch that ran to its verdict is FINISHED whether it was written or not
 * (the result says which); ERROR is for one that could not be processed.
 */
export function batchProcessStatus(batch: Pick<BatchState, 'status' | 'changesApplied' | 'changesTotal' | 'hasResult'>): ProcessStatus {
  switch (batch.status) {
    case 'ACCEPTED':
      return { state: 'PENDING', progress: 0 };
    case 'PROCESSING':
      return { state: 'PROCESSING', progress: percent(batch.changesApplied, batch.changesTotal) };
    case 'COMPLETED':
      return { state: 'FINISHED', progress: 100 };
    case 'FAILED':
      return batch.hasResult ? { state: 'FINISHED', progress: 100 } : { state: 'ERROR', progress: 100 };
  }
}

/** Done share as a whole percentage; 100 only once finished, so a client never reads "100, PROCESSING" as done. */
export function percent(done: number, total: number | null): number {
  if (!total || total <= 0) return 0;
  return Math.min(99, Math.floor((done * 100) / total));
}

/** Our extension resource (GET /api/v2/batches/{id}/detail): the counts and times the CLI and operators want. */
export interface BatchDetailView extends ProcessStatus {
  updateRequestId: string;
  /** The service's own finer state: ACCEPTED, PROCESSING, COMPLETED (written) or FAILED (not written). */
  status: BatchState['status'];
  changesTotal: number | null;
  changesApplied: number;
  submittedBy: string;
  /**
   * Temporal's attempt of the apply activity: the current one while the
   * workflow runs, the number started once it ended; null before the first.
   */
  attempt: number | null;
  /** How often this batch id was submitted (a FAILED batch may be sent again with its forceKey). */
  submissions: number;
  submittedAt: string;
  finishedAt: string | null;
  /** Why a batch could not be processed (state ERROR); null otherwise. */
  error: string | null;
}

export function batchDetailView(batch: BatchState): BatchDetailView {
  return {
    updateRequestId: batch.id,
    ...batchProcessStatus(batch),
    status: batch.status,
    changesTotal: batch.changesTotal,
    changesApplied: batch.changesApplied,
    submittedBy: batch.submittedBy,
    attempt: batch.activityAttempts,
    submissions: batch.attempt,
    submittedAt: toIso(batch.submittedAt),
    finishedAt: batch.finishedAt === null ? null : toIso(batch.finishedAt),
    error: batch.error,
  };
}

/** The outcome to show for a finished batch; a batch that failed outside the rules gets one ERROR issue saying why. */
export function batchOutcome(batch: Pick<BatchRow, 'result' | 'error'>): BatchResult {
  return batch.result ?? singleIssueFailure('ProcessingFailed', batch.error ?? 'the batch could not be processed');
}

/** The outcome of a finished batch as read for its answer: the result document is read only now (it may be megabytes). */
export async function readBatchOutcome(
  deps: Pick<ServiceDeps, 'db'>,
  batch: Pick<BatchState, 'id' | 'hasResult' | 'error'>,
): Promise<BatchResult> {
  const result = batch.hasResult ? await deps.db.batches.findResult(batch.id) : null;
  return batchOutcome({ result, error: batch.error });
}

/** A failure document of one ERROR issue, not tied to an entity: what the service says of a batch when no rule does. */
export function singleIssueFailure(issueCode: string, message: string): BatchFailure {
  return {
    outcome: 'failure',
    entities: [{ issues: [{ uuid: '00000000-0000-4000-8000-000000000000', severity: 'ERROR', issueCode, message }] }],
  };
}

/** The ORM's pool hands timestamps back as text; either way the API answers ISO 8601 in UTC. */
export function toIso(value: Date | string): string {
  return new Date(value).toISOString();
}
