// What Temporal knows about a workflow: the attempts of its activities, its
// status, and a one-line diagnosis for failure messages.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { pollUntil } from '../../support/poll.ts';

export interface ActivityAttempt {
  attempt: number;
  /** The failure of the attempt before this one. */
  lastFailure?: string;
}

export class WorkflowInspector {
  private readonly address: string;
  private connection: Promise<Connection> | undefined;

  constructor(address: string) {
    this.address = address;
  }

  async close(): Promise<void> {
    const connection = await this.connection?.catch(() => undefined);
    await connection?.close().catch(() => undefined);
  }

  /**
   * The attempt number of each activity as the history records it (only the
   * last attempt of an activity gets an ActivityTaskStarted event, and only
   * once it has finished).
   */
  async activityAttempts(workflowId: string): Promise<ActivityAttempt[]> {
    const history = await (await this.handle(workflowId)).fetchHistory();
    return (history.events ?? []).flatMap((event) => {
      const started = event.activityTaskStartedEventAttributes;
      if (!started) return [];
      const failure = started.lastFailure;
      const lastFailure = failure ? `${failure.message ?? ''}${failure.cause?.message ? `: ${failure.cause.message}` : ''}` : undefined;
      return [{ attempt: started.attempt ?? 0, ...(lastFailure === undefined ? {} : { lastFailure }) }];
    });
  }

  /**
   * The attempts, once the history holds a finished activity: a batch's row is
   * COMPLETED at its commit, while its activity may still run what follows the
   * commit (ANALYZE after a large batch, decision 0190) and is recorded only
   * when it ends.
   */
  async finishedActivityAttempts(workflowId: string, timeoutMs = 5 * 60_000): Promise<ActivityAttempt[]> {
    await pollUntil(async () => ((await this.activitiesFinished(workflowId)) > 0 ? true : undefined), {
      timeoutMs,
      intervalMs: 200,
      what: `an activity of ${workflowId} recorded as finished`,
    });
    return this.activityAttempts(workflowId);
  }

  /** How many of the workflow's activities Temporal has recorded as ended: completed, failed or timed out. */
  private async activitiesFinished(workflowId: string): Promise<number> {
    const history = await (await this.handle(workflowId)).fetchHistory();
    return (history.events ?? []).filter(
      (event) =>
        event.activityTaskCompletedEventAttributes || event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes,
    ).length;
  }

  /** How many of the workflow's activities Temporal has recorded as completed. */
  async activitiesCompleted(workflowId: string): Promise<number> {
    const history = await (await this.handle(workflowId)).fetchHistory();
    return (history.events ?? []).filter((event) => event.activityTaskCompletedEventAttributes).length;
  }

  /** The attempt of the workflow's pending activity, if one is pending. */
  async pendingAttempt(workflowId: string): Promise<number | undefined> {
    const description = await (await this.handle(workflowId)).describe();
    return description.raw.pendingActivities?.[0]?.attempt ?? undefined;
  }

  /** The identity (pid@host) of the worker running the workflow's activity, once one has started it. */
  async holder(workflowId: string): Promise<string | undefined> {
    return (await this.startedActivity(workflowId))?.worker;
  }

  /** The workflow's activity while a worker runs it: that worker's identity and the attempt. */
  async startedActivity(workflowId: string): Promise<{ worker: string; attempt: number } | undefined> {
    const pending = (await (await this.handle(workflowId)).describe()).raw.pendingActivities?.[0];
    if (pending?.state !== proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED || !pending.lastWorkerIdentity)
      return undefined;
    return { worker: pending.lastWorkerIdentity, attempt: pending.attempt ?? 1 };
  }

  /** Terminates the workflow, as an operator does in the UI or with `temporal workflow terminate`. */
  async terminate(workflowId: string, reason: string): Promise<void> {
    await (await this.handle(workflowId)).terminate(reason);
  }

  /** Cancels the workflow, as an operator does in the UI or with `temporal workflow cancel`. */
  async cancel(workflowId: string): Promise<void> {
    await (await this.handle(workflowId)).cancel();
  }

  /** The execution status (RUNNING, COMPLETED, …), or NOT_FOUND. */
  async status(workflowId: string): Promise<string> {
    try {
      return (await (await this.handle(workflowId)).describe()).status.name;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'NOT_FOUND';
      throw error;
    }
  }

  /** Status, pending activities and the last history events, for a failure message. */
  async diagnose(workflowId: string): Promise<string> {
    try {
      const handle = await this.handle(workflowId);
      const description = await handle.describe();
      const pending = (description.raw.pendingActivities ?? []).map(
        (activity) =>
          `${activity.activityType?.name} attempt ${activity.attempt} state ${activity.state} last failure ${activity.lastFailure?.message ?? 'none'}`,
      );
      const events = ((await handle.fetchHistory()).events ?? []).map((event) => String(event.eventType)).slice(-8);
      return `workflow ${description.status.name}; pending: ${pending.join(' | ') || 'none'}; last event types: ${events.join(', ')}`;
    } catch (error) {
      return `workflow: ${(error as Error).message}`;
    }
  }

  /** Whether the schedule `scheduleId` exists (the expiry schedule is `<task queue>-expiry`). */
  async scheduleExists(scheduleId: string): Promise<boolean> {
    this.connection ??= Connection.connect({ address: this.address, connectTimeout: 5000 });
    try {
      await new Client({ connection: await this.connection }).schedule.getHandle(scheduleId).describe();
      return true;
    } catch (error) {
      if ((error as Error).name === 'ScheduleNotFoundError') return false;
      throw error;
    }
  }

  private async handle(workflowId: string) {
    this.connection ??= Connection.connect({ address: this.address, connectTimeout: 5000 });
    return new Client({ connection: await this.connection }).workflow.getHandle(workflowId);
  }
}

export function describeAttempts(attempts: readonly ActivityAttempt[]): string {
  return (
    attempts.map((a) => `attempt ${a.attempt}${a.lastFailure ? ` (after: ${a.lastFailure.slice(0, 160)})` : ''}`).join(', ') ||
    'none recorded yet'
  );
}
