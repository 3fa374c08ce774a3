import { patched, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { BatchActivities, ExportActivities } from '../temporal/contracts.ts';

const HOUSEKEEPING: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
};
const { expireExports } = proxyActivities<ExportActivities>(HOUSEKEEPING);
const { removeExpiredBatchBodies } = proxyActivities<BatchActivities>(HOUSEKEEPING);

/** The patch that added the removal of batch bodies (docs/decisions/0160-workflow-changes-behind-patches.md). */
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
