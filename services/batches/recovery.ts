import type { ServiceDeps } from '../deps.ts';
import type { StrandedCursor } from '../../db/batches.ts';
import { describeJobWorkflow, type JobWorkflowState } from '../../temporal/client/job-workflow.ts';
import { directoryExportStore } from '../exports/files.ts';
import { startExportRun } from '../exports/workflow.ts';
import { registerSearchAttributes } from '../../temporal/client/register.ts';
import { ensureExpirySchedule } from '../../temporal/client/schedules.ts';
import { startBatchRun, type BatchRun } from './workflow.ts';

// Jobs whose row and workflow disagree for good, repaired by every API now
// and then (any number of APIs may sweep at once: each repair is idempotent).
// - A batch is stored (ACCEPTED) and then its workflow started. An API that
//   stops between the two leaves a batch that nothing would ever apply:
//   the sweep starts its workflow.
// - A batch or export whose workflow ended without it (an operator
//   terminated or cancelled it while no worker ran the activity, or it timed
//   out) would say ACCEPTED or PROCESSING forever: the sweep ends it FAILED,
//   saying why (an activity that is running records it itself, at once).
// - A batch still PROCESSING whose workflow Temporal no longer knows (its
//   history was lost, a cluster rebuilt) is started again: nothing of it
//   was committed (its apply, told its workflow is gone, rolls back and
//   records nothing).
// - Temporal itself may have come back empty: every sweep first creates the
//   search attributes and the expiry schedule when they are missing.
// The sweep is also the outbox of submissions: a v2 batch or an export whose
// workflow could not be started (Temporal away) stays ACCEPTED and is
// started here (docs/decisions/0186).

/** How old a job must be before it counts as stranded: far beyond the milliseconds from commit to start. */
const STRANDED_AFTER_SECONDS = 60;
const SWEEP_EVERY_MS = 60_000;
/** Rows read at a time; a sweep pages through all of them. */
const JOBS_PER_PAGE = 100;

export interface Repairs {
  /** Batches and exports whose workflow was started (or, batches, found waiting). */
  started: string[];
  /** Batches and exports ended FAILED because their workflow had ended. */
  ended: string[];
  /** What Temporal lacked and the sweep created: search attributes, the expiry schedule. */
  created: string[];
}

type SweepDeps = Pick<ServiceDeps, 'config' | 'temporal' | 'db'>;

/** Every row `page` returns, page by page after the last row's cursor. */
async function* everyRow<Cursor, Row extends { cursor: Cursor }>(page: (after: Cursor | undefined) => Promise<Row[]>): AsyncGenerator<Row> {
  let after: Cursor | undefined;
  for (;;) {
    const rows = await page(after);
    yield* rows;
    if (rows.length < JOBS_PER_PAGE) return;
    after = rows.at(-1)!.cursor;
  }
}

/**
 * What the workflows need in Temporal besides themselves: the search
 * attributes they set, and the schedule of the expiry workflow. Created when
 * missing (a new cluster, or one that lost its state), by every sweep, so
 * that nothing needs a restart after Temporal comes back empty.
 */
export async function ensureTemporalSetup(deps: Pick<ServiceDeps, 'config' | 'temporal'>): Promise<string[]> {
  const created: string[] = [];
  const added = await registerSearchAttributes(deps.temporal.connection, deps.config.TEMPORAL_NAMESPACE);
  if (added.length > 0) created.push(`search attributes ${added.join(', ')}`);
  if (
    await ensureExpirySchedule(deps.temporal, {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      everyMs: deps.config.EXPORT_EXPIRY_EVERY_MINUTES * 60_000,
    })
  ) {
    created.push('the expiry schedule');
  }
  return created;
}

/** One sweep: makes sure Temporal has what the workflows need, then looks at every stranded batch and export and repairs it. */
export async function repairStrandedJobs(deps: SweepDeps, olderThanSeconds = STRANDED_AFTER_SECONDS): Promise<Repairs> {
  const { batches, exports } = deps.db;
  const repairs: Repairs = { started: [], ended: [], created: await ensureTemporalSetup(deps) };

  for await (const run of everyRow((after?: StrandedCursor) => batches.findStaleAccepted(olderThanSeconds, JOBS_PER_PAGE, after))) {
    const workflow = await describeJobWorkflow(deps.temporal, run.batchId);
    if (workflow && !workflow.closed) {
      repairs.started.push(run.batchId);
    } else if (workflow && workflow.status !== 'COMPLETED') {
      if (await batches.fail(run.batchId, endedMessage(workflow))) repairs.ended.push(run.batchId);
    } else {
      await startAgain(deps, run, repairs);
    }
  }

  for await (const run of everyRow((after?: StrandedCursor) => batches.findStaleProcessing(olderThanSeconds, JOBS_PER_PAGE, after))) {
    const workflow = await describeJobWorkflow(deps.temporal, run.batchId);
    if (!workflow) await startAgain(deps, run, repairs);
    else if (workflow.closed && (await batches.fail(run.batchId, endedMessage(workflow)))) repairs.ended.push(run.batchId);
  }

  const store = directoryExportStore(deps.config.exportDir);
  for await (const run of everyRow((after?: StrandedCursor) => exports.findStaleRunning(olderThanSeconds, JOBS_PER_PAGE, after))) {
    const { id } = run;
    const workflow = await describeJobWorkflow(deps.temporal, id);
    if (workflow && !workflow.closed) continue;
    // Kept ACCEPTED by a start that Temporal did not answer: the row is the outbox.
    if (!workflow && run.status === 'ACCEPTED') {
      await startExportRun(deps, run, 'USE_EXISTING');
      repairs.started.push(id);
      continue;
    }
    const reason = workflow ? endedMessage(workflow) : 'its workflow no longer exists in Temporal; start a new export';
    await exports.fail(id, reason);
    await store.remove(id);
    repairs.ended.push(id);
  }
  return repairs;
}

async function startAgain(deps: SweepDeps, run: BatchRun, repairs: Repairs): Promise<void> {
  await startBatchRun(deps, run, 'USE_EXISTING');
  repairs.started.push(run.batchId);
}

function endedMessage(workflow: JobWorkflowState): string {
  const how =
    { TERMINATED: 'terminated by an operator', CANCELLED: 'cancelled by an operator' }[workflow.status as string] ??
    `ended ${workflow.status}`;
  return `${how}: its workflow ended (${workflow.status}) before the job did; nothing was written`;
}

/** After a sweep that failed (Temporal away): the next one comes sooner, so that a return is noticed within seconds. */
const RETRY_SWEEP_MS = 10_000;

/** Sweeps at once and then every minute (every 10 s while Temporal does not answer) until the returned function is called. */
export function sweepStrandedJobs(deps: Pick<ServiceDeps, 'config' | 'temporal' | 'db' | 'log'>): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const sweep = async () => {
    let next = SWEEP_EVERY_MS;
    try {
      const { started, ended, created } = await repairStrandedJobs(deps);
      if (created.length > 0) deps.log.warn({ created }, 'created in Temporal what the workflows need');
      if (started.length > 0) deps.log.warn({ jobs: started }, 'started the workflows of batches and exports left without one');
      if (ended.length > 0) deps.log.warn({ jobs: ended }, 'ended jobs whose workflow had ended without them');
    } catch (error) {
      next = RETRY_SWEEP_MS;
      deps.log.warn({ err: error }, `could not look for stranded jobs; trying again in ${RETRY_SWEEP_MS / 1000} s`);
    }
    if (stopped) return;
    timer = setTimeout(() => void sweep(), next);
    timer.unref();
  };
  void sweep();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
