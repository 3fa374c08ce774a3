import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { expiryScheduleId, WORKFLOW_TYPES } from '../names.ts';

export interface ExpiryScheduleOptions {
  taskQueue: string;
  /** How often the expiry workflow runs: an export file lives at most this much past its expiry. */
  everyMs: number;
}

/**
 * Creates the schedule that runs the expiry workflow (workflows/expiry.ts)
 * every `everyMs`, unless it exists already. Every API calls this at start:
 * the first creates it, the others find it (restarts included). It is listed
 * on the Temporal UI's Schedules page under its id, `<task queue>-expiry`.
 * Returns whether this call created it.
 */
export async function ensureExpirySchedule(client: Client, options: ExpiryScheduleOptions): Promise<boolean> {
  const scheduleId = expiryScheduleId(options.taskQueue);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: options.everyMs }] },
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOW_TYPES.expiry,
        workflowId: `${scheduleId}-run`,
        taskQueue: options.taskQueue,
        args: [],
        workflowExecutionTimeout: '30 minutes',
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' },
      memo: { purpose: 'removes export files past their expiry and marks those exports EXPIRED' },
    });
    return true;
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) return false;
    throw error;
  }
}
