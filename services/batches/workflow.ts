import { WorkflowIdReusePolicy, type WorkflowIdConflictPolicy } from '@temporalio/client';
import type { ServiceDeps } from '../deps.ts';
import type { Config } from '../../config.ts';
import type { XmlVersion } from '../../domain/model.ts';
import { WORKFLOW_TYPES, type Lane } from '../../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import type { BatchWorkflowInput } from '../../temporal/contracts.ts';
import type { batchWorkflow } from '../../workflows/batch.ts';

/** A stored batch, as the Temporal UI shows its workflow. */
export interface BatchRun {
  batchId: string;
  submitter: string;
  apiVersion: XmlVersion;
  changes: number;
  bytes: number;
}

/**
 * The lane of a batch, from what is known when it is stored: its number of
 * changes (counted while validating) and its body's size. Small batches (a
 * person's save) get the interactive lane's slots; the rest share the bulk
 * slots with exports. Recovery starts a stranded batch in the same lane.
 */
export function batchLane(
  config: Pick<Config, 'SMALL_BATCH_MAX_CHANGES' | 'SMALL_BATCH_MAX_BYTES'>,
  run: Pick<BatchRun, 'changes' | 'bytes'>,
): Lane {
  return run.changes <= config.SMALL_BATCH_MAX_CHANGES && run.bytes <= config.SMALL_BATCH_MAX_BYTES ? 'interactive' : 'bulk';
}

/**
 * Starts the workflow that applies stored batch `batchId` (workflow ID = batch
 * ID). A FAILED batch may run again under its id, so a closed run never
 * stands in the way; `onConflict` says what to do about a run still open.
 * The workflow runs on the deployment's task queue; its activities on its lane's.
 */
export async function startBatchRun(
  deps: Pick<ServiceDeps, 'config' | 'temporal'>,
  run: BatchRun,
  onConflict: WorkflowIdConflictPolicy,
): Promise<void> {
  const lane = batchLane(deps.config, run);
  const input: BatchWorkflowInput = { batchId: run.batchId, lane, applyTimeoutMs: deps.config.BATCH_APPLY_TIMEOUT_HOURS * 3_600_000 };
  // Typed by the workflow function (imported as a type only): its arguments are checked.
  await deps.temporal.workflow.start<typeof batchWorkflow>(WORKFLOW_TYPES.batch, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: run.batchId,
    args: [input],
    memo: { submitter: run.submitter, apiVersion: run.apiVersion, bytes: run.bytes, changes: run.changes, lane },
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.submitter, value: run.submitter },
      { key: SEARCH_ATTRIBUTES.kind, value: run.apiVersion },
    ],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    workflowIdConflictPolicy: onConflict,
  });
}
