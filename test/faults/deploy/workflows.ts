// The next release's workflows, as the deploy scenario deploys them: the
// batch workflow gains a step (a short timer before its apply) behind
// patched(), as docs/decisions/0160-workflow-changes-behind-patches.md
// requires. A batch begun by the previous release replays without the step;
// one begun by this release takes it.
import { patched, sleep } from '@temporalio/workflow';
import type { BatchWorkflowInput, BatchWorkflowOutcome } from '../../../temporal/contracts.ts';
import { batchWorkflow as previousBatchWorkflow } from '../../../workflows/batch.ts';

export { exportWorkflow } from '../../../workflows/export.ts';
export { expiryWorkflow } from '../../../workflows/expiry.ts';

export const DEPLOY_PATCH = 'deploy-scenario-pause-before-apply';

export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchWorkflowOutcome> {
  if (patched(DEPLOY_PATCH)) await sleep('1 second');
  return previousBatchWorkflow(input);
}
