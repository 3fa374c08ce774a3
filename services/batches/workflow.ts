import { WorkflowIdReusePolicy, type WorkflowIdConflictPolicy } from '@temporalio/client';
import type { ServiceDeps } from '../deps.ts';
import type { XmlVersion } from '../../domain/model.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import type { BatchWorkflowInput } from '../../workflows/batch.ts';

/** A stored batch, as the Temporal UI shows its workflow. */
export interface BatchRun {
  batchId: string;
  submitter: string;
  apiVersion: XmlVersion;
  changes: number;
  bytes: number;
}

/**
 * Starts the workflow that applies stored batch `batchId` (workflow ID = batch
 * ID). A FAILED batch may run again under its id, so a closed run never
 * stands in the way; `onConflict` says what to do about a run still open.
 */
export async function startBatchRun(deps: Pick<ServiceDeps, 'config' | 'temporal'>, run: BatchRun, onConflict: WorkflowIdConflictPolicy): Promise<void> {
  const input: BatchWorkflowInput = { batchId: run.batchId };
  await deps.temporal.workflow.start(WORKFLOW_TYPES.batch, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: run.batchId,
    args: [input],
    memo: { submitter: run.submitter, apiVersion: run.apiVersion, bytes: run.bytes, changes: run.changes },
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.submitter, value: run.submitter },
      { key: SEARCH_ATTRIBUTES.kind, value: run.apiVersion },
    ],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    workflowIdConflictPolicy: onConflict,
  });
}
