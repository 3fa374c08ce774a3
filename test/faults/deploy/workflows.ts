// The next release's workflows, as the deploy scenario deploys them: the
// batch workflow gains a step (a short timer before its apply), with no
// patched() branch. Workflows are pinned to the worker deployment version
// that started them (docs/decisions/0161-deploys-by-worker-versioning.md), so
// a batch begun by the previous release never replays on this code; one
// begun by this release takes the step.
import { sleep } from '@temporalio/workflow';
import type { BatchWorkflowInput, BatchWorkflowOutcome } from '../../../temporal/contracts.ts';
import { batchWorkflow as previousBatchWorkflow } from '../../../workflows/batch.ts';

export { exportWorkflow } from '../../../workflows/export.ts';
export { expiryWorkflow } from '../../../workflows/expiry.ts';

export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchWorkflowOutcome> {
  await sleep('1 second');
  return previousBatchWorkflow(input);
}
