import { ApplicationFailure, defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BatchActivities } from '../activities/batches.ts';
import { QUERIES } from '../temporal/names.ts';

export interface BatchWorkflowInput {
  batchId: string;
}

export interface BatchWorkflowOutcome {
  batchId: string;
  status: 'COMPLETED' | 'FAILED';
}

export type BatchPhase = 'ACCEPTED' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
export const batchPhaseQuery = defineQuery<BatchPhase>(QUERIES.batchPhase);

const { applyBatch } = proxyActivities<BatchActivities>({
  // One activity applies the whole batch in one transaction; a 100k-entity
  // batch takes minutes, so liveness is judged by heartbeats, not the total.
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '60 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
});

export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchWorkflowOutcome> {
  let phase: BatchPhase = 'PROCESSING';
  setHandler(batchPhaseQuery, () => phase);
  const status = await applyBatch(input.batchId);
  phase = status;
  if (status !== 'COMPLETED' && status !== 'FAILED') {
    throw ApplicationFailure.nonRetryable(`batch ${input.batchId} ended in unexpected state ${String(status)}`);
  }
  return { batchId: input.batchId, status };
}
