import type { AppDeps } from '../../api/deps.ts';
import { pgPool } from '../../db/orm.ts';
import { findStaleAcceptedBatches } from './store.ts';
import { startBatchRun } from './workflow.ts';

// A batch is stored (ACCEPTED) and then its workflow started. An API that
// stops between the two leaves a batch that nothing would ever apply unless
// its client sent it again. Every API therefore looks, now and then, for
// batches still ACCEPTED well after the moment their workflow should have
// started, and starts it. A batch whose workflow does exist (waiting for a
// worker, say) keeps it: the start then changes nothing, so any number of
// APIs may sweep at once.

/** How old an ACCEPTED batch must be before it counts as stranded: far beyond the milliseconds from commit to start. */
export const STRANDED_AFTER_SECONDS = 60;
const SWEEP_EVERY_MS = 60_000;
const BATCHES_PER_SWEEP = 100;

/** Starts the workflow of every stranded batch; returns their ids. */
export async function restartStrandedBatches(deps: Pick<AppDeps, 'config' | 'temporal' | 'orm'>, olderThanSeconds = STRANDED_AFTER_SECONDS): Promise<string[]> {
  const stranded = await findStaleAcceptedBatches(await pgPool(deps.orm), olderThanSeconds, BATCHES_PER_SWEEP);
  for (const run of stranded) await startBatchRun(deps, run, 'USE_EXISTING');
  return stranded.map((run) => run.batchId);
}

/** Sweeps at once and then every minute until the returned function is called. */
export function sweepStrandedBatches(deps: Pick<AppDeps, 'config' | 'temporal' | 'orm' | 'log'>): () => void {
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const started = await restartStrandedBatches(deps);
      if (started.length > 0) deps.log.warn({ batches: started }, 'started the workflows of batches left ACCEPTED without one');
    } catch (error) {
      deps.log.warn({ err: error }, 'could not look for stranded batches; trying again in a minute');
    } finally {
      running = false;
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
