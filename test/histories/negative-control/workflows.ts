// The negative control of the replay test: today's workflows, except that the
// batch workflow starts a timer before its apply, one command more than any
// recorded batch history has. Replaying those histories against this bundle
// must fail with a determinism error; if it does not, the replay test cannot
// catch a change that breaks running workflows.
import { sleep } from '@temporalio/workflow';
import type { BatchWorkflowInput, BatchWorkflowOutcome } from '../../../temporal/contracts.ts';
import { batchWorkflow as currentBatchWorkflow } from '../../../workflows/batch.ts';

export { exportWorkflow } from '../../../workflows/export.ts';
export { expiryWorkflow } from '../../../workflows/expiry.ts';

export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchWorkflowOutcome> {
  await sleep('1 millisecond');
  return currentBatchWorkflow(input);
}
