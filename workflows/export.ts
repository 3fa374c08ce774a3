import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ExportActivities, ExportWorkflowInput, ExportWorkflowOutcome } from '../temporal/contracts.ts';
import { JOB_HEARTBEAT_TIMEOUT } from '../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.ts';

const { runExport } = proxyActivities<ExportActivities>({
  // One activity streams the whole file; a million records take about a
  // minute, so liveness is judged by heartbeats (sent every second), not the total.
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: JOB_HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
  // A cancel waits for the activity to drop its file.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

const { markExportFailed } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * One export: write the file and close. Its expiry is not this workflow's
 * business: the expiry schedule (workflows/expiry.ts) removes files past
 * their time, so the workflow of a finished export is closed, not RUNNING.
 */
export async function exportWorkflow(input: ExportWorkflowInput): Promise<ExportWorkflowOutcome> {
  let outcome;
  try {
    outcome = await runExport(input.exportId, input.retentionMs);
  } catch (error) {
    if (isCancellation(error)) {
      await CancellationScope.nonCancellable(async () => {
        upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: 'CANCELLED' }]);
        await markExportFailed(input.exportId, 'cancelled by an operator: its workflow was cancelled in Temporal; no file was kept');
      });
      throw error;
    }
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: 'FAILED' }]);
    await markExportFailed(input.exportId, reason);
    throw ApplicationFailure.nonRetryable(`export ${input.exportId} could not be written: ${reason}`);
  }
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: outcome.status }]);
  return { exportId: input.exportId, status: outcome.status, ...(outcome.status === 'COMPLETED' ? { entitiesWritten: outcome.entitiesWritten } : {}) };
}
