import {
  ActivityCancellationType,
  defineQuery,
  proxyActivities,
  setHandler,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { BatchActivities, BatchWorkflowInput, BatchWorkflowOutcome } from '../temporal/contracts.ts';
import { JOB_HEARTBEAT_TIMEOUT, laneTaskQueue, QUERIES } from '../temporal/names.ts';
import { MARK_FAILED_OPTIONS, runJob } from './job-run.ts';

export type BatchPhase = 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
export const batchPhaseQuery = defineQuery<BatchPhase>(QUERIES.batchPhase);

const APPLY_OPTIONS: ActivityOptions = {
  // One activity applies the whole batch in one transaction; a 100k-entity
  // batch takes minutes, so liveness is judged by heartbeats (sent every
  // second), not the total: a killed worker's attempt is retried elsewhere
  // within the heartbeat timeout. The whole, queueing and retries included,
  // is bounded by the input's applyTimeoutMs (BATCH_APPLY_TIMEOUT_HOURS).
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: JOB_HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
  // A cancel waits for the activity to roll back, so the batch is never
  // reported cancelled while its transaction could still commit.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/** The batch's activities, on its lane's task queue: both of them, so a small batch's ending never waits for a bulk slot either. */
function batchActivities({ lane, applyTimeoutMs }: BatchWorkflowInput) {
  const onLane = lane === 'interactive' ? { taskQueue: laneTaskQueue(workflowInfo().taskQueue, 'interactive') } : {};
  // Runs started before the bound existed keep their options: unbounded but for the attempts.
  const bounded = applyTimeoutMs === undefined ? {} : { scheduleToCloseTimeout: applyTimeoutMs };
  const { applyBatch } = proxyActivities<BatchActivities>({ ...APPLY_OPTIONS, ...bounded, ...onLane });
  const { markBatchFailed } = proxyActivities<BatchActivities>({ ...MARK_FAILED_OPTIONS, ...onLane });
  return { applyBatch, markBatchFailed };
}

/**
 * One batch: apply it. A verdict of the rules (FAILED with its issues) is a
 * result, so the workflow still completes, with Outcome=FAILED. Cancelled in
 * Temporal, the batch ends FAILED saying so, and the workflow CANCELED.
 */
export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchWorkflowOutcome> {
  let phase: BatchPhase = 'PROCESSING';
  setHandler(batchPhaseQuery, () => phase);
  const { applyBatch, markBatchFailed } = batchActivities(input);
  const status = await runJob({
    failure: `batch ${input.batchId} could not be applied`,
    cancelledReason: 'cancelled by an operator: its workflow was cancelled in Temporal; nothing was written',
    run: () => applyBatch(input.batchId),
    outcomeOf: (applied) => applied,
    markFailed: (reason) => markBatchFailed(input.batchId, reason),
    onOutcome: (outcome) => {
      phase = outcome;
    },
  });
  return { batchId: input.batchId, status };
}
