import { WorkflowIdReusePolicy, type WorkflowIdConflictPolicy } from '@temporalio/client';
import type { AppDeps } from '../../api/deps.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import type { BatchWorkflowInput } from '../../workflows/batch.ts';

/**
 * Starts the workflow that applies stored batch `batchId` (workflow ID = batch
 * ID). A FAILED batch may run again under its id, so a closed run never
 * stands in the way; `onConflict` says what to do about a run still open.
 */
export async function startBatchRun(deps: Pick<AppDeps, 'config' | 'temporal'>, batchId: string, onConflict: WorkflowIdConflictPolicy): Promise<void> {
  const input: BatchWorkflowInput = { batchId };
  await deps.temporal.workflow.start(WORKFLOW_TYPES.batch, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: batchId,
    args: [input],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    workflowIdConflictPolicy: onConflict,
  });
}
