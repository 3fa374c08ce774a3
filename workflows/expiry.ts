import { patched, proxyActivities, setWorkflowOptions, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { BatchActivities, ExportActivities } from '../temporal/contracts.ts';

const HOUSEKEEPING: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
};
const { expireExports } = proxyActivities<ExportActivities>(HOUSEKEEPING);
const { removeExpiredBatchBodies } = proxyActivities<BatchActivities>(HOUSEKEEPING);

/**
 * The patch that added the removal of batch bodies. It stays: this workflow
 * upgrades to each new release (below), so a run in flight at a deploy
 * replays on the new code (docs/decisions/0161-deploys-by-worker-versioning.md).
 */
const BATCH_BODY_RETENTION_PATCH = 'remove-expired-batch-bodies';

/**
 * Housekeeping, started by the expiry schedule (temporal/client/schedules.ts): every
 * export file past its expiry is removed and its export marked EXPIRED; then
 * the bodies of batches ended past their retention are removed.
 */
export async function expiryWorkflow(): Promise<{ exportsExpired: number; batchBodiesRemoved?: number }> {
  const exportsExpired = await expireExports();
  if (!patched(BATCH_BODY_RETENTION_PATCH)) return { exportsExpired };
  return { exportsExpired, batchBodiesRemoved: await removeExpiredBatchBodies() };
}

// Housekeeping the schedule starts for as long as the service runs: each run
// moves to the current release instead of keeping the previous one's workers
// busy, so a deploy drains without waiting for it, and a change here still
// goes behind patched(). Only on a versioned worker: an unversioned one
// (WORKER_VERSIONING=false) fails a workflow task that names a behaviour.
setWorkflowOptions(
  () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'AUTO_UPGRADE' } : {}),
  expiryWorkflow,
);
