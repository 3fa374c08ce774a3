import { ApplicationFailure, CancellationScope, isCancellation, upsertSearchAttributes, type ActivityOptions } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.ts';

/** What the Outcome search attribute says of a job that did not run to its own result. */
type JobEnding = 'FAILED' | 'CANCELLED';

/** The options of a job's mark-failed activity: short, and retried until the row says FAILED. */
export const MARK_FAILED_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
};

/** One job of a workflow (a batch, an export): its one long activity and how its failure is recorded. */
export interface Job<Result, Outcome extends string> {
  /** What the workflow's failure says before the reason, e.g. `batch 42 could not be applied`. */
  failure: string;
  /** The reason recorded when an operator cancels the workflow in Temporal. */
  cancelledReason: string;
  run(): Promise<Result>;
  outcomeOf(result: Result): Outcome;
  markFailed(reason: string): Promise<void>;
  /** Told the outcome as soon as it is known, before anything is recorded (the batch's phase query answers with it). */
  onOutcome?(outcome: Outcome | JobEnding): void;
}

/**
 * Runs a job the way every job workflow does. Its outcome goes into the
 * Outcome search attribute. A failure for good marks the job FAILED with its
 * reason and fails the workflow. A cancel in Temporal waits for the activity
 * to stop, then marks the job failed as cancelled, out of the cancel's reach,
 * and the workflow ends CANCELLED.
 */
export async function runJob<Result, Outcome extends string>(job: Job<Result, Outcome>): Promise<Result> {
  let result: Result;
  try {
    result = await job.run();
  } catch (error) {
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(async () => {
        recordOutcome(job, 'CANCELLED');
        await job.markFailed(job.cancelledReason);
      });
      throw error;
    }
    const reason = failureReason(error);
    recordOutcome(job, 'FAILED');
    await job.markFailed(reason);
    throw ApplicationFailure.nonRetryable(`${job.failure}: ${reason}`);
  }
  recordOutcome(job, job.outcomeOf(result));
  return result;
}

function recordOutcome<Outcome extends string>(job: Job<unknown, Outcome>, outcome: Outcome | JobEnding): void {
  job.onOutcome?.(outcome);
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: outcome }]);
}

/** An activity's failure wraps the activity's own error: that one says why. */
function failureReason(error: unknown): string {
  return error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
}
