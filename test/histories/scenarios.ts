// The job workflows' scenarios whose histories are recorded (record.ts) and
// replayed against the current bundle (test/integration/replay.test.ts).
// Each runs the real workflow code with its activities played here: the
// history, not what the activities do, is what a workflow change must stay
// compatible with.
import { Context } from '@temporalio/activity';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { BatchActivities, BatchWorkflowInput, ExportActivities, ExportWorkflowInput } from '../../temporal/contracts.ts';
import { laneTaskQueue, WORKFLOW_TYPES } from '../../temporal/names.ts';
import { pollUntil } from '../support/poll.ts';

export type Activities = BatchActivities & ExportActivities;

export interface HistoryScenario {
  /** The file name of its history (without .json). */
  name: string;
  /** What the activities do in it; those missing fail the activity for good. */
  activities: Partial<Activities>;
  /** Starts the workflow and brings it to the point where its history is taken. */
  drive(client: Client, taskQueue: string, workflowId: string): Promise<WorkflowHandle>;
}

/** An activity that heartbeats until it is cancelled (or its workflow is gone). */
async function untilCancelled(): Promise<never> {
  const context = Context.current();
  for (;;) {
    context.heartbeat({ phase: 'write', done: 0.5 });
    await context.sleep(100);
  }
}

const failedForGood = (message: string) => async (): Promise<never> => {
  throw ApplicationFailure.nonRetryable(message, 'Deterministic');
};

async function heartbeating(handle: WorkflowHandle): Promise<void> {
  await pollUntil(async () => ((await handle.describe()).raw.pendingActivities?.[0]?.lastHeartbeatTime ? true : undefined), {
    timeoutMs: 30_000,
    what: `workflow ${handle.workflowId}'s activity to heartbeat`,
  });
}

async function settled(handle: WorkflowHandle): Promise<WorkflowHandle> {
  await handle.result().catch(() => undefined);
  return handle;
}

const batchInput = (batchId: string, lane?: BatchWorkflowInput['lane']): BatchWorkflowInput => (lane ? { batchId, lane } : { batchId });
const exportInput = (exportId: string): ExportWorkflowInput => ({ exportId, retentionMs: 86_400_000 });

const startBatch = (client: Client, taskQueue: string, batchId: string, lane?: BatchWorkflowInput['lane']) =>
  client.workflow.start(WORKFLOW_TYPES.batch, { taskQueue, workflowId: batchId, args: [batchInput(batchId, lane)] });
const startExport = (client: Client, taskQueue: string, exportId: string) =>
  client.workflow.start(WORKFLOW_TYPES.export, { taskQueue, workflowId: exportId, args: [exportInput(exportId)] });

const exportWritten = async () => ({ status: 'COMPLETED' as const, entitiesWritten: 3, bytes: 1024, sha256: '0'.repeat(64), expiresAt: new Date(Date.now() + 86_400_000).toISOString() });

export const HISTORY_SCENARIOS: HistoryScenario[] = [
  { name: 'batch-bulk-completed', activities: { applyBatch: async () => 'COMPLETED' }, drive: async (c, q, id) => settled(await startBatch(c, q, id, 'bulk')) },
  { name: 'batch-interactive-completed', activities: { applyBatch: async () => 'COMPLETED' }, drive: async (c, q, id) => settled(await startBatch(c, q, id, 'interactive')) },
  { name: 'batch-no-lane-completed', activities: { applyBatch: async () => 'COMPLETED' }, drive: async (c, q, id) => settled(await startBatch(c, q, id)) },
  { name: 'batch-rules-failed', activities: { applyBatch: async () => 'FAILED' }, drive: async (c, q, id) => settled(await startBatch(c, q, id, 'interactive')) },
  {
    name: 'batch-failed-for-good',
    activities: { applyBatch: failedForGood('value too long for type character varying(40)'), markBatchFailed: async () => undefined },
    drive: async (c, q, id) => settled(await startBatch(c, q, id, 'bulk')),
  },
  {
    name: 'batch-cancelled',
    activities: { applyBatch: untilCancelled, markBatchFailed: async () => undefined },
    drive: async (c, q, id) => {
      const handle = await startBatch(c, q, id, 'bulk');
      await heartbeating(handle);
      await handle.cancel();
      return settled(handle);
    },
  },
  {
    name: 'batch-terminated',
    activities: { applyBatch: untilCancelled },
    drive: async (c, q, id) => {
      const handle = await startBatch(c, q, id, 'bulk');
      await heartbeating(handle);
      await handle.terminate('an operator terminated it');
      return settled(handle);
    },
  },
  {
    name: 'batch-open-mid-apply',
    activities: { applyBatch: untilCancelled },
    drive: async (c, q, id) => {
      const handle = await startBatch(c, q, id, 'bulk');
      await heartbeating(handle);
      return handle;
    },
  },
  {
    name: 'batch-open-mid-apply-interactive',
    activities: { applyBatch: untilCancelled },
    drive: async (c, q, id) => {
      const handle = await startBatch(c, q, id, 'interactive');
      await heartbeating(handle);
      return handle;
    },
  },
  { name: 'export-completed', activities: { runExport: exportWritten }, drive: async (c, q, id) => settled(await startExport(c, q, id)) },
  {
    name: 'export-failed-for-good',
    activities: { runExport: failedForGood('no space left on device'), markExportFailed: async () => undefined },
    drive: async (c, q, id) => settled(await startExport(c, q, id)),
  },
  {
    name: 'export-cancelled',
    activities: { runExport: untilCancelled, markExportFailed: async () => undefined },
    drive: async (c, q, id) => {
      const handle = await startExport(c, q, id);
      await heartbeating(handle);
      await handle.cancel();
      return settled(handle);
    },
  },
  {
    name: 'export-open-mid-write',
    activities: { runExport: untilCancelled },
    drive: async (c, q, id) => {
      const handle = await startExport(c, q, id);
      await heartbeating(handle);
      return handle;
    },
  },
  {
    name: 'expiry-completed',
    activities: { expireExports: async () => 2, removeExpiredBatchBodies: async () => 5 },
    drive: async (c, q, id) => settled(await c.workflow.start(WORKFLOW_TYPES.expiry, { taskQueue: q, workflowId: id, args: [] })),
  },
];

/** The task queues a scenario's workers poll: the workflow's and the interactive and export lanes'. */
export function scenarioTaskQueues(taskQueue: string): string[] {
  return [taskQueue, laneTaskQueue(taskQueue, 'interactive'), laneTaskQueue(taskQueue, 'export')];
}
