import type { ServiceDeps } from '../deps.ts';
import type { BatchActivities, BatchHeartbeat, ExportActivities, ExportHeartbeat } from '../../temporal/contracts.ts';
import { workflowUiUrl, type JobWorkflowState, type PendingJobActivity } from '../../temporal/client/job-workflow.ts';
import type { BatchState } from '../../db/batches.ts';
import type { ExportState } from '../../db/exports.ts';
import { effectiveStatus } from '../exports/status.ts';
import { workflowReads, type WorkflowAnswer } from './workflow-reads.ts';

// One truth for a job: while its workflow is open, what Temporal
// says (the workflow's status, the pending activity's attempt, last failure
// and heartbeat progress); once the row says the job ended, after the
// namespace retention, or while Temporal cannot be reached, the row. What
// Temporal says is shared by the reads of one job for a moment
// (workflow-reads.ts); the row is read every time.

/** The activities whose attempts a job's detail counts. */
const BATCH_ACTIVITY: keyof BatchActivities = 'applyBatch';
const EXPORT_ACTIVITY: keyof ExportActivities = 'runExport';

/** The workflow behind a job, as the extension resources show it. */
export interface JobWorkflowView {
  workflowId: string;
  /** Null when Temporal has no run (not started yet, forgotten after retention) or could not be asked. */
  runId: string | null;
  /** Temporal's execution status (RUNNING, COMPLETED, TERMINATED, …), or null as runId. */
  status: string | null;
  /** The attempt of the running activity (1 = first), while one is pending. */
  attempt: number | null;
  /** The failure that ended the previous attempt, while the job is retried. */
  lastFailure: string | null;
  /** When the running attempt last heartbeat. */
  lastHeartbeatAt: string | null;
  /** The worker running the attempt. */
  worker: string | null;
  /** The workflow in the Temporal Web UI. */
  temporalUiUrl: string;
}

export interface JobView<Row> {
  /**
   * The job's row as of now: the stored row, with its status, progress and
   * error as the workflow tells them while it runs. The status functions of
   * batches and exports shape it for the wire.
   */
  row: Row;
  /** Where status and progress come from. */
  source: 'workflow' | 'database';
  workflow: JobWorkflowView;
}

export interface JobViewOptions {
  /**
   * Ask Temporal about a job that has ended too (for its run id and UI link).
   * The plain status leaves it out: once the row says the job ended, the row
   * is the answer.
   */
  detail?: boolean;
  /**
   * Reuse no kept answer that the workflow runs (a describe in flight is
   * still shared): for a result or download read, which may reach another
   * API process than the status read that saw the workflow stopped.
   */
  fresh?: boolean;
}

type ViewDeps = Pick<ServiceDeps, 'db' | 'temporal' | 'config'>;

export async function batchJobView(deps: ViewDeps, id: string, options: JobViewOptions = {}): Promise<JobView<BatchState> | undefined> {
  const row = await deps.db.batches.findState(id);
  if (!row) return undefined;
  const ended = row.status === 'COMPLETED' || row.status === 'FAILED';
  const live = ended && !options.detail ? undefined : await askTemporal(deps, id, options, ended);
  const state = live?.state && !closedBefore(live.state, row.submittedAt) ? live.state : undefined;
  const now = ended || !state ? undefined : batchFromWorkflow(row, state);
  return { row: now ? { ...row, ...now } : row, source: now ? 'workflow' : 'database', workflow: workflowView(deps, id, state) };
}

export async function exportJobView(deps: ViewDeps, id: string, options: JobViewOptions = {}): Promise<JobView<ExportState> | undefined> {
  const row = await deps.db.exports.findState(id);
  if (!row) return undefined;
  const status = effectiveStatus(row);
  const ended = status === 'COMPLETED' || status === 'FAILED' || status === 'EXPIRED';
  const live = ended && !options.detail ? undefined : await askTemporal(deps, id, options, ended);
  const now = ended || !live?.state ? undefined : exportFromWorkflow(row, live.state);
  return { row: now ? { ...row, ...now } : row, source: now ? 'workflow' : 'database', workflow: workflowView(deps, id, live?.state) };
}

/** What Temporal says, or undefined when it could not be asked (the row answers then). */
function askTemporal(deps: ViewDeps, id: string, options: JobViewOptions, ended: boolean): Promise<WorkflowAnswer> {
  return workflowReads(deps.temporal, deps.config.JOB_STATUS_CACHE_MS).read(id, {
    // A client polls the plain status often and with short timeouts of its own: a slow Temporal costs it at most a second.
    timeoutMs: options.detail ? 3_000 : 1_000,
    // Once the row says the job ended, an answer that its workflow still runs is older than the row.
    usable: ended || options.fresh ? (state) => state === undefined || state.closed : undefined,
  });
}

/**
 * A run that closed before the row was stored belongs to an earlier
 * submission of the same batch id (a FAILED batch sent again with its
 * forceKey): until the new run starts, it says nothing about this one.
 */
function closedBefore(state: JobWorkflowState, submittedAt: Date | string): boolean {
  return state.closed && state.closeTime !== undefined && state.closeTime.getTime() < new Date(submittedAt).getTime();
}

/** Temporal's attempt of the job's own activity, while it is the one pending. */
function attemptOf(activity: PendingJobActivity | undefined, type: string): number | undefined {
  return activity?.type === type ? activity.attempt : undefined;
}

/** A batch whose row has not ended, as its workflow tells it; undefined when the row is the answer. */
function batchFromWorkflow(
  row: BatchState,
  workflow: JobWorkflowState,
): Pick<BatchState, 'status' | 'changesApplied' | 'error' | 'activityAttempts'> | undefined {
  const stopped = stoppedWorkflow(workflow);
  if (stopped) return { status: 'FAILED', changesApplied: row.changesApplied, error: stopped, activityAttempts: row.activityAttempts };
  if (workflow.closed) return undefined;
  const activity = workflow.activity;
  const beat = activity?.heartbeat as Partial<BatchHeartbeat> | undefined;
  const written = typeof beat?.done === 'number' && row.changesTotal !== null ? Math.floor(beat.done * row.changesTotal) : 0;
  const running = activity !== undefined && (activity.state !== 'SCHEDULED' || activity.attempt > 1);
  return {
    status: running || row.status === 'PROCESSING' ? 'PROCESSING' : 'ACCEPTED',
    changesApplied: Math.max(written, row.changesApplied),
    error: activity?.lastFailure ?? null,
    activityAttempts: attemptOf(activity, BATCH_ACTIVITY) ?? row.activityAttempts,
  };
}

/** An export whose row has not ended, as its workflow tells it; undefined when the row is the answer. */
function exportFromWorkflow(
  row: ExportState,
  workflow: JobWorkflowState,
): Pick<ExportState, 'status' | 'entitiesWritten' | 'bytes' | 'error' | 'activityAttempts'> | undefined {
  const stopped = stoppedWorkflow(workflow);
  if (stopped)
    return {
      status: 'FAILED',
      entitiesWritten: row.entitiesWritten,
      bytes: row.bytes,
      error: stopped,
      activityAttempts: row.activityAttempts,
    };
  if (workflow.closed) return undefined;
  const activity = workflow.activity;
  const beat = activity?.heartbeat as Partial<ExportHeartbeat> | undefined;
  const running = activity !== undefined && (activity.state !== 'SCHEDULED' || activity.attempt > 1);
  return {
    status: running || row.status === 'RUNNING' ? 'RUNNING' : 'ACCEPTED',
    entitiesWritten: Math.max(beat?.entitiesWritten ?? 0, Number(row.entitiesWritten)),
    bytes: Math.max(beat?.bytes ?? 0, Number(row.bytes)),
    error: activity?.lastFailure ?? null,
    activityAttempts: attemptOf(activity, EXPORT_ACTIVITY) ?? row.activityAttempts,
  };
}

/**
 * A workflow that ended without the job ending (an operator terminated or
 * cancelled it, or it timed out): the job is over, whatever the row says
 * until the activity or the sweep records it.
 */
function stoppedWorkflow(workflow: JobWorkflowState): string | undefined {
  if (!workflow.closed || workflow.status === 'COMPLETED' || workflow.status === 'CONTINUED_AS_NEW') return undefined;
  const how =
    workflow.status === 'TERMINATED'
      ? 'terminated'
      : workflow.status === 'CANCELLED'
        ? 'cancelled'
        : workflow.status.toLowerCase().replace('_', ' ');
  return `its workflow was ${how} in Temporal; nothing was written`;
}

function workflowView(deps: ViewDeps, id: string, state: JobWorkflowState | undefined): JobWorkflowView {
  const activity = state?.activity;
  return {
    workflowId: id,
    runId: state?.runId ?? null,
    status: state?.status ?? null,
    attempt: activity?.attempt ?? null,
    lastFailure: activity?.lastFailure ?? null,
    lastHeartbeatAt: activity?.lastHeartbeatAt?.toISOString() ?? null,
    worker: activity?.worker ?? null,
    temporalUiUrl: workflowUiUrl(deps.config.temporalUiUrl, deps.config.TEMPORAL_NAMESPACE, id, state?.runId),
  };
}
