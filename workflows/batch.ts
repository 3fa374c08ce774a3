import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { BatchActivities, BatchWorkflowInput, BatchWorkflowOutcome } from '../temporal/contracts.ts';
import { JOB_HEARTBEAT_TIMEOUT, laneTaskQueue, QUERIES, type Lane } from '../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.ts';

export type BatchPhase = 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
export const batchPhaseQuery = defineQuery<BatchPhase>(QUERIES.batchPhase);

const APPLY_OPTIONS: ActivityOptions = {
  // One activity applies the whole batch in one transaction; a 100k-entity
  // batch takes minutes, so liveness is judged by heartbeats (sent every
  // second), not the total: a killed worker's attempt is retried elsewhere
  // within the heartbeat timeout.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: JOB_HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
  // A cancel waits for the activity to roll back, so the batch is never
  // reported cancelled while its transaction could still commit.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

const MARK_FAILED_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
};

/** The batch's activities, on its lane's task queue: both of them, so a small batch's ending never waits for a bulk slot either. */
function batchActivities(lane: Lane | undefined) {
  const onLane = lane === 'interactive' ? { taskQueue: laneTaskQueue(workflowInfo().taskQueue, 'interactive') } : {};
  const { applyBatch } = proxyActivities<BatchActivities>({ ...APPLY_OPTIONS, ...onLane });
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
  const { applyBatch, markBatchFailed } = batchActivities(input.lane);
  try {
    phase = await applyBatch(input.batchId);
  } catch (error) {
    if (isCancellation(error)) {
      phase = 'CANCELLED';
      await CancellationScope.nonCancellable(async () => {
        upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: phase }]);
        await markBatchFailed(input.batchId, 'cancelled by an operator: its workflow was cancelled in Temporal; nothing was written');
      });
      throw error;
    }
    phase = 'FAILED';
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: phase }]);
    const reason = failureReason(error);
    await markBatchFailed(input.batchId, reason);
    throw ApplicationFailure.nonRetryable(`batch ${input.batchId} could not be applied: ${reason}`);
  }
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: phase }]);
  return { batchId: input.batchId, status: phase };
}

function failureReason(error: unknown): string {
  return error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
}
