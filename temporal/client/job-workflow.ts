import { WorkflowNotFoundError, type Client, type WorkflowExecutionStatusName } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';

// What Temporal knows about the workflow of one batch or export (workflow ID =
// the job's id): read by the status of a job while it runs, by the sweep that
// repairs jobs whose workflow is gone, and by an activity that must know
// whether it may still commit. Not for workflow code (it imports the client).

const ActivityState = proto.temporal.api.enums.v1.PendingActivityState;

type PendingActivityState = 'SCHEDULED' | 'STARTED' | 'CANCEL_REQUESTED' | 'PAUSED' | 'PAUSE_REQUESTED' | 'UNSPECIFIED';

export interface PendingJobActivity {
  activityId: string;
  type: string;
  attempt: number;
  state: PendingActivityState;
  /** The message of the failure that ended the previous attempt. */
  lastFailure?: string;
  /** The details of the attempt's last heartbeat (the activities send their progress). */
  heartbeat?: unknown;
  lastHeartbeatAt?: Date;
  /** The worker running the attempt (its identity, `pid@host` by default). */
  worker?: string;
}

export interface JobWorkflowState {
  workflowId: string;
  runId: string;
  status: WorkflowExecutionStatusName;
  /** False while RUNNING; the job's row is then the record. */
  closed: boolean;
  /** An operator asked to cancel it (recorded at once, before the workflow has acted on it). */
  cancelRequested: boolean;
  startTime: Date;
  closeTime?: Date;
  activity?: PendingJobActivity;
}

/** Bound on one describe for a status read: it must not hang on an unreachable server. */
const DESCRIBE_TIMEOUT_MS = 3_000;

/**
 * The latest run of workflow `workflowId` (or run `runId`), or undefined when
 * Temporal has no such workflow (never started, or forgotten after the
 * namespace retention). Rejects when Temporal cannot be reached in time.
 */
export async function describeJobWorkflow(
  client: Client,
  workflowId: string,
  options: { runId?: string; timeoutMs?: number } = {},
): Promise<JobWorkflowState | undefined> {
  let description;
  try {
    const timeoutMs = options.timeoutMs ?? DESCRIBE_TIMEOUT_MS;
    // The abort ends the call and the client's retries of it too, not only our wait for them.
    const abort = new AbortController();
    const describing = client.withAbortSignal(abort.signal, () => client.workflow.getHandle(workflowId, options.runId).describe());
    describing.catch(() => undefined);
    try {
      description = await withTimeout(describing, timeoutMs, `describing workflow ${workflowId}`);
    } finally {
      abort.abort();
    }
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
  const pending = description.raw.pendingActivities?.[0];
  return {
    workflowId,
    runId: description.runId,
    status: description.status.name,
    closed: description.status.name !== 'RUNNING',
    cancelRequested: description.raw.workflowExtendedInfo?.cancelRequested === true,
    startTime: description.startTime,
    closeTime: description.closeTime,
    activity: pending ? pendingActivity(pending) : undefined,
  };
}

function pendingActivity(pending: proto.temporal.api.workflow.v1.IPendingActivityInfo): PendingJobActivity {
  const failure = pending.lastFailure;
  const payload = pending.heartbeatDetails?.payloads?.[0];
  const seconds = pending.lastHeartbeatTime?.seconds;
  return {
    activityId: pending.activityId ?? '',
    type: pending.activityType?.name ?? '',
    attempt: pending.attempt ?? 1,
    state: (ActivityState[pending.state ?? 0]?.replace('PENDING_ACTIVITY_STATE_', '') ?? 'UNSPECIFIED') as PendingActivityState,
    ...(failure ? { lastFailure: failure.cause?.message ? `${failure.message}: ${failure.cause.message}` : (failure.message ?? '') } : {}),
    ...(payload ? { heartbeat: decode(payload) } : {}),
    ...(seconds !== undefined && seconds !== null
      ? { lastHeartbeatAt: new Date(Number(seconds) * 1000 + Math.floor((pending.lastHeartbeatTime?.nanos ?? 0) / 1e6)) }
      : {}),
    ...(pending.lastWorkerIdentity ? { worker: pending.lastWorkerIdentity } : {}),
  };
}

function decode(payload: proto.temporal.api.common.v1.IPayload): unknown {
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch {
    return undefined;
  }
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TemporalUnreachable(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

class TemporalUnreachable extends Error {}

/**
 * Every batch and export that did not succeed, whatever stopped it: a verdict
 * of the rules or an operator's cancel (the Outcome search attribute; such a
 * batch's workflow closes COMPLETED), or a workflow that failed, was
 * terminated or timed out. The README gives it to operators as it is.
 */
export const FAILED_JOBS_QUERY =
  'Outcome IN ("FAILED", "CANCELLED") OR ExecutionStatus IN ("Failed", "Terminated", "Canceled", "TimedOut")';

/** The Temporal Web UI's workflow list filtered by a visibility query (the UI reads `query` from its address). */
export function workflowListUiUrl(uiBaseUrl: string, namespace: string, query: string): string {
  return `${uiBaseUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`;
}

/** The address of a workflow run in the Temporal Web UI. */
export function workflowUiUrl(uiBaseUrl: string, namespace: string, workflowId: string, runId?: string): string {
  const base = `${uiBaseUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
