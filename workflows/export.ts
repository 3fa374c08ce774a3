import { ActivityCancellationType, patched, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { ExportActivities, ExportWorkflowInput, ExportWorkflowOutcome } from '../temporal/contracts.ts';
import { EXPORT_LANE_PATCH, JOB_HEARTBEAT_TIMEOUT, laneTaskQueue } from '../temporal/names.ts';
import { MARK_FAILED_OPTIONS, runJob } from './job-run.ts';

const RUN_OPTIONS: ActivityOptions = {
  // One activity streams the whole file; a million records take about a
  // minute, so liveness is judged by heartbeats (sent every second), not the total.
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: JOB_HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
  // A cancel waits for the activity to drop its file.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/** The export's activities, in the export lane: slots of their own, so exports never wait for or hold an import's. */
function exportActivities() {
  const onLane = patched(EXPORT_LANE_PATCH) ? { taskQueue: laneTaskQueue(workflowInfo().taskQueue, 'export') } : {};
  const { runExport } = proxyActivities<ExportActivities>({ ...RUN_OPTIONS, ...onLane });
  const { markExportFailed } = proxyActivities<ExportActivities>({ ...MARK_FAILED_OPTIONS, ...onLane });
  return { runExport, markExportFailed };
}

/**
 * One export: write the file and close. Its expiry is not this workflow's
 * business: the expiry schedule (workflows/expiry.ts) removes files past
 * their time, so the workflow of a finished export is closed, not RUNNING.
 */
export async function exportWorkflow(input: ExportWorkflowInput): Promise<ExportWorkflowOutcome> {
  const { runExport, markExportFailed } = exportActivities();
  const outcome = await runJob({
    failure: `export ${input.exportId} could not be written`,
    cancelledReason: 'cancelled by an operator: its workflow was cancelled in Temporal; no file was kept',
    run: () => runExport(input.exportId, input.retentionMs),
    outcomeOf: (written) => written.status,
    markFailed: (reason) => markExportFailed(input.exportId, reason),
  });
  return {
    exportId: input.exportId,
    status: outcome.status,
    ...(outcome.status === 'COMPLETED' ? { entitiesWritten: outcome.entitiesWritten } : {}),
  };
}
