import { ApplicationFailure, proxyActivities, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTES } from '../temporal/search-attributes.ts';
import type { ExportActivities } from '../activities/exports.ts';

export interface ExportWorkflowInput {
  exportId: string;
  /** How long the finished file is kept (config EXPORT_RETENTION_HOURS, fixed when the export is requested). */
  retentionMs: number;
}

export interface ExportWorkflowOutcome {
  exportId: string;
  status: 'EXPIRED' | 'FAILED';
  entitiesWritten?: number;
}

const { runExport } = proxyActivities<ExportActivities>({
  // One activity streams the whole file; a million records take about a
  // minute, so liveness is judged by heartbeats (sent every step), not the total.
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const { markExportFailed, expireExport } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * One export: write the file, then keep it for the retention period on a
 * durable timer (it survives worker and server restarts) and delete it.
 */
export async function exportWorkflow(input: ExportWorkflowInput): Promise<ExportWorkflowOutcome> {
  let outcome;
  try {
    outcome = await runExport(input.exportId, input.retentionMs);
  } catch (error) {
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: 'FAILED' }]);
    await markExportFailed(input.exportId, reason);
    throw ApplicationFailure.nonRetryable(`export ${input.exportId} could not be written: ${reason}`);
  }
  if (outcome.status !== 'COMPLETED') {
    const status = outcome.status === 'EXPIRED' ? 'EXPIRED' : 'FAILED';
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: status }]);
    return { exportId: input.exportId, status };
  }
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: 'COMPLETED' }]);

  // expiresAt was stored with the file; the workflow clock is deterministic.
  await sleep(Math.max(1, Date.parse(outcome.expiresAt) - Date.now()));
  await expireExport(input.exportId);
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.outcome, value: 'EXPIRED' }]);
  return { exportId: input.exportId, status: 'EXPIRED', entitiesWritten: outcome.entitiesWritten };
}
