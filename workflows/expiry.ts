import { proxyActivities } from '@temporalio/workflow';
import type { ExportActivities } from '../temporal/contracts.ts';

const { expireExports } = proxyActivities<ExportActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/**
 * Housekeeping, started by the expiry schedule (temporal/client/schedules.ts): every
 * export file past its expiry is removed and its export marked EXPIRED.
 */
export async function expiryWorkflow(): Promise<{ exportsExpired: number }> {
  return { exportsExpired: await expireExports() };
}
