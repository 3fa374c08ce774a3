import type { Client } from '@temporalio/client';
import type { AppDeps } from '../../api/deps.ts';
import type { BatchStatus } from '../../db/entities/batch.ts';
import type { ExportKind, ExportStatus } from '../../db/entities/export-request.ts';
import { pgPool } from '../../db/orm.ts';
import type { Queryable } from '../../db/sql.ts';
import { describeJobWorkflow, workflowUiUrl, type JobWorkflowState } from '../../temporal/job-workflow.ts';
import { findBatch, type BatchRow } from '../batches/store.ts';
import { findExport, type ExportRow } from '../exports/requests.ts';
import { effectiveStatus } from '../exports/status.ts';
import { temporalReachability } from './reachability.ts';

// One truth for a job (DESIGN §10): while its workflow is open, what Temporal
// says (the workflow's status, the pending activity's attempt, last failure
// and heartbeat progress); once the row says the job ended, after the
// namespace retention, or while Temporal cannot be reached, the row.

/** The states a client of the real system knows (DESIGN §9). */
export type JobState = 'PENDING' | 'PROCESSING' | 'FINISHED' | 'ERROR';

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

interface JobViewBase {
  id: string;
  state: JobState;
  /** 0..100. */
  progress: number;
  /** Where state and progress come from. */
  source: 'workflow' | 'database';
  /** Why the job ended in the error state (or, while it runs, why its last attempt failed). */
  error: string | null;
  workflow: JobWorkflowView;
}

export interface BatchJobView extends JobViewBase {
  kind: 'batch';
  /** The batch's own lifecycle (DESIGN §4), as the workflow or the row says. */
  status: BatchStatus;
  changesTotal: number | null;
  changesApplied: number;
  submittedAt: string;
  finishedAt: string | null;
  row: BatchRow;
}

export interface ExportJobView extends JobViewBase {
  kind: 'export';
  /** The export's own lifecycle (DESIGN §5), as the workflow or the row says. */
  status: ExportStatus;
  exportKind: ExportKind;
  entitiesWritten: number;
  bytes: number;
  createdAt: string;
  finishedAt: string | null;
  expiresAt: string | null;
  row: ExportRow;
}

export interface JobViewOptions {
  /**
   * Ask Temporal about a job that has ended too (for its run id and UI link).
   * The plain status leaves it out: once the row says the job ended, the row
   * is the answer.
   */
  detail?: boolean;
}

type ViewDeps = Pick<AppDeps, 'orm' | 'temporal' | 'config'>;

export async function batchJobView(deps: ViewDeps, id: string, options: JobViewOptions = {}): Promise<BatchJobView | undefined> {
  const pool = await pgPool(deps.orm);
  const row = await findBatch(pool, id);
  if (!row) return undefined;
  const ended = row.status === 'COMPLETED' || row.status === 'FAILED';
  const live = ended && !options.detail ? undefined : await askTemporal(deps.temporal, id);
  const fromRow = {
    status: row.status,
    changesApplied: row.changesApplied,
    error: row.error,
    source: 'database' as const,
  };
  const now = ended || !live?.state ? fromRow : batchFromWorkflow(row, live.state);
  return {
    kind: 'batch',
    id,
    status: now.status,
    state: batchState(now.status, row),
    progress: batchProgress(now.status, now.changesApplied, row.changesTotal),
    source: now.source,
    error: now.error,
    workflow: workflowView(deps, id, live?.state),
    changesTotal: row.changesTotal,
    changesApplied: now.changesApplied,
    submittedAt: toIso(row.submittedAt),
    finishedAt: toIsoOrNull(row.finishedAt),
    row,
  };
}

export async function exportJobView(deps: ViewDeps, id: string, options: JobViewOptions = {}): Promise<ExportJobView | undefined> {
  const pool = await pgPool(deps.orm);
  const row = await findExport(pool, id);
  if (!row) return undefined;
  const rowStatus = effectiveStatus(row);
  const ended = rowStatus === 'COMPLETED' || rowStatus === 'FAILED' || rowStatus === 'EXPIRED';
  const live = ended && !options.detail ? undefined : await askTemporal(deps.temporal, id);
  const fromRow = { status: rowStatus, entitiesWritten: Number(row.entitiesWritten), bytes: Number(row.bytes), error: row.error, source: 'database' as const };
  const now = ended || !live?.state ? fromRow : exportFromWorkflow(row, live.state);
  return {
    kind: 'export',
    id,
    status: now.status,
    state: exportState(now.status),
    progress: await exportProgress(pool, now.status, now.entitiesWritten, row),
    source: now.source,
    error: now.error,
    workflow: workflowView(deps, id, live?.state),
    exportKind: row.kind,
    entitiesWritten: now.entitiesWritten,
    bytes: now.bytes,
    createdAt: toIso(row.createdAt),
    finishedAt: toIsoOrNull(row.finishedAt),
    expiresAt: toIsoOrNull(row.expiresAt),
    row,
  };
}

/** A batch that ran to a verdict is FINISHED (its result says success or failure); ERROR only when it could not be processed. */
export function batchState(status: BatchStatus, row: Pick<BatchRow, 'result'>): JobState {
  if (status === 'ACCEPTED') return 'PENDING';
  if (status === 'PROCESSING') return 'PROCESSING';
  if (status === 'COMPLETED') return 'FINISHED';
  return row.result ? 'FINISHED' : 'ERROR';
}

/** An export is FINISHED while its file can be downloaded; a failed or expired one is ERROR. */
export function exportState(status: ExportStatus): JobState {
  if (status === 'ACCEPTED') return 'PENDING';
  if (status === 'RUNNING') return 'PROCESSING';
  return status === 'COMPLETED' ? 'FINISHED' : 'ERROR';
}

/** What Temporal says, or undefined when it could not be asked (the row answers then). */
async function askTemporal(client: Client, id: string): Promise<{ state: JobWorkflowState | undefined } | undefined> {
  if (!temporalReachability.worthAsking(client)) return undefined;
  try {
    const state = await describeJobWorkflow(client, id);
    temporalReachability.answered(client);
    return { state };
  } catch {
    temporalReachability.failed(client);
    return undefined;
  }
}

interface BatchNow {
  status: BatchStatus;
  changesApplied: number;
  error: string | null;
  source: 'workflow' | 'database';
}

/** A batch whose row has not ended yet, as its workflow tells it. */
function batchFromWorkflow(row: BatchRow, workflow: JobWorkflowState): BatchNow {
  const stopped = stoppedWorkflow(workflow);
  if (stopped) return { status: 'FAILED', changesApplied: row.changesApplied, error: stopped, source: 'workflow' };
  if (workflow.closed) return { status: row.status, changesApplied: row.changesApplied, error: row.error, source: 'database' };
  const activity = workflow.activity;
  const beat = activity?.heartbeat as { phase?: string; done?: number } | undefined;
  const written = typeof beat?.done === 'number' && row.changesTotal !== null ? Math.floor(beat.done * row.changesTotal) : row.changesApplied;
  const running = activity !== undefined && (activity.state !== 'SCHEDULED' || activity.attempt > 1);
  return {
    status: running || row.status === 'PROCESSING' ? 'PROCESSING' : 'ACCEPTED',
    changesApplied: Math.max(written, row.changesApplied),
    error: activity?.lastFailure ?? null,
    source: 'workflow',
  };
}

interface ExportNow {
  status: ExportStatus;
  entitiesWritten: number;
  bytes: number;
  error: string | null;
  source: 'workflow' | 'database';
}

function exportFromWorkflow(row: ExportRow, workflow: JobWorkflowState): ExportNow {
  const written = Number(row.entitiesWritten);
  const bytes = Number(row.bytes);
  const stopped = stoppedWorkflow(workflow);
  if (stopped) return { status: 'FAILED', entitiesWritten: written, bytes, error: stopped, source: 'workflow' };
  if (workflow.closed) return { status: row.status, entitiesWritten: written, bytes, error: row.error, source: 'database' };
  const activity = workflow.activity;
  const beat = activity?.heartbeat as { entitiesWritten?: number; bytes?: number } | undefined;
  const running = activity !== undefined && (activity.state !== 'SCHEDULED' || activity.attempt > 1);
  return {
    status: running || row.status === 'RUNNING' ? 'RUNNING' : 'ACCEPTED',
    entitiesWritten: Math.max(beat?.entitiesWritten ?? 0, written),
    bytes: Math.max(beat?.bytes ?? 0, bytes),
    error: activity?.lastFailure ?? null,
    source: 'workflow',
  };
}

/**
 * A workflow that ended without the job ending (an operator terminated or
 * cancelled it, or it timed out): the job is over, whatever the row says
 * until the activity or the sweep records it.
 */
function stoppedWorkflow(workflow: JobWorkflowState): string | undefined {
  if (!workflow.closed || workflow.status === 'COMPLETED' || workflow.status === 'CONTINUED_AS_NEW') return undefined;
  const how = workflow.status === 'TERMINATED' ? 'terminated' : workflow.status === 'CANCELLED' ? 'cancelled' : workflow.status.toLowerCase().replace('_', ' ');
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

/** Finished is 100; a running job stops short of it until it has ended. */
function batchProgress(status: BatchStatus, applied: number, total: number | null): number {
  if (status === 'COMPLETED' || status === 'FAILED') return 100;
  if (status === 'ACCEPTED' || !total) return 0;
  return Math.min(99, Math.floor((applied / total) * 100));
}

async function exportProgress(db: Queryable, status: ExportStatus, written: number, row: ExportRow): Promise<number> {
  if (status !== 'ACCEPTED' && status !== 'RUNNING') return 100;
  if (status === 'ACCEPTED' || written === 0) return 0;
  const total = row.requestedIds.length > 0 ? row.requestedIds.length : await estimatedEntityCount(db);
  return total > 0 ? Math.min(99, Math.floor((written / total) * 100)) : 0;
}

/** An export of every record has no list to count against: the planner's estimate is close enough for a progress bar, and free. */
async function estimatedEntityCount(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select greatest(reltuples, 0)::float8 as n from pg_class where oid = 'entity'::regclass`);
  return Number(rows[0]?.n ?? 0);
}

function toIso(value: Date | string): string {
  return new Date(value).toISOString();
}

function toIsoOrNull(value: Date | string | null): string | null {
  return value === null ? null : toIso(value);
}
