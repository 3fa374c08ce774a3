import { ApplicationFailure, defineQuery, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { BatchActivities } from '../activities/batches.ts';
import { QUERIES } from '../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.ts';

export interface BatchWorkflowInput {
  batchId: string;
}

export interface BatchWorkflowOutcome {
  batchId: string;
  status: 'COMPLETED' | 'FAILED';
}

export type BatchPhase = 'PROCESSING' | 'COMPLETED' | 'FAILED';
export const batchPhaseQuery = defineQuery<BatchPhase>(QUERIES.batchPhase);

const { applyBatch } = proxyActivities<BatchActivities>({
  // One activity applies the whole batch in one transaction; a 100k-entity
  // batch takes minutes, so liveness is judged by heartbeats, not the total.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const { markBatchFailed } = proxyActivities<BatchActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchWorkflowOutcome> {
  let phase: BatchPhase = 'PROCESSING';
  setHandler(batchPhaseQuery, () => phase);
  try {
    phase = await applyBatch(input.batchId);
  } catch (error) {
    phase = 'FAILED';
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: phase }]);
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    await markBatchFailed(input.batchId, reason);
    throw ApplicationFailure.nonRetryable(`batch ${input.batchId} could not be applied: ${reason}`);
  }
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: phase }]);
  return { batchId: input.batchId, status: phase };
}
