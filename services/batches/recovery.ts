import type { ServiceDeps } from '../deps.ts';
import { describeJobWorkflow, type JobWorkflowState } from '../../temporal/client/job-workflow.ts';
import { directoryExportStore } from '../exports/files.ts';
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
//   history was lost) is started again: nothing of it was committed.

/** How old a job must be before it counts as stranded: far beyond the milliseconds from commit to start. */
const STRANDED_AFTER_SECONDS = 60;
const SWEEP_EVERY_MS = 60_000;
const JOBS_PER_SWEEP = 100;

export interface Repairs {
  /** Batches whose workflow was started (or found waiting). */
  started: string[];
  /** Batches and exports ended FAILED because their workflow had ended. */
  ended: string[];
}

type SweepDeps = Pick<ServiceDeps, 'config' | 'temporal' | 'db'>;

/** One sweep: looks at every stranded batch and export and repairs it. */
export async function repairStrandedJobs(deps: SweepDeps, olderThanSeconds = STRANDED_AFTER_SECONDS): Promise<Repairs> {
  const { batches, exports } = deps.db;
  const repairs: Repairs = { started: [], ended: [] };

  for (const run of await batches.findStaleAccepted(olderThanSeconds, JOBS_PER_SWEEP)) {
    const workflow = await describeJobWorkflow(deps.temporal, run.batchId);
    if (workflow && !workflow.closed) {
      repairs.started.push(run.batchId);
    } else if (workflow && workflow.status !== 'COMPLETED') {
      if (await batches.fail(run.batchId, endedMessage(workflow))) repairs.ended.push(run.batchId);
    } else {
      await startAgain(deps, run, repairs);
    }
  }

  for (const run of await batches.findStaleProcessing(olderThanSeconds, JOBS_PER_SWEEP)) {
    const workflow = await describeJobWorkflow(deps.temporal, run.batchId);
    if (!workflow) await startAgain(deps, run, repairs);
    else if (workflow.closed && (await batches.fail(run.batchId, endedMessage(workflow)))) repairs.ended.push(run.batchId);
  }

  const store = directoryExportStore(deps.config.exportDir);
  for (const id of await exports.findStaleRunning(olderThanSeconds, JOBS_PER_SWEEP)) {
    const workflow = await describeJobWorkflow(deps.temporal, id);
    if (workflow && !workflow.closed) continue;
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
  const how = { TERMINATED: 'terminated by an operator', CANCELLED: 'cancelled by an operator' }[workflow.status as string] ?? `ended ${workflow.status}`;
  return `${how}: its workflow ended (${workflow.status}) before the job did; nothing was written`;
}

/** Sweeps at once and then every minute until the returned function is called. */
export function sweepStrandedJobs(deps: Pick<ServiceDeps, 'config' | 'temporal' | 'db' | 'log'>): () => void {
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const { started, ended } = await repairStrandedJobs(deps);
      if (started.length > 0) deps.log.warn({ batches: started }, 'started the workflows of batches left without one');
      if (ended.length > 0) deps.log.warn({ jobs: ended }, 'ended jobs whose workflow had ended without them');
    } catch (error) {
      deps.log.warn({ err: error }, 'could not look for stranded jobs; trying again in a minute');
    } finally {
      running = false;
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
