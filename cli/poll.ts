import { setTimeout as sleep } from 'node:timers/promises';
import type { ProcessStatus } from '../services/batches/status.ts';
import type { JobDetailExtras } from '../services/jobs/presenters.ts';

const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 1000;

/** Reads until `done` holds, quickly at first and then once a second; `seen` gets every value read. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  seen: (value: T) => void = () => undefined,
): Promise<T> {
  let delay = FIRST_DELAY_MS;
  for (;;) {
    const value = await read();
    seen(value);
    if (done(value)) return value;
    await sleep(delay);
    delay = Math.min(MAX_DELAY_MS, Math.round(delay * 1.5));
  }
}

/** Reads of a finished job that wait for its workflow to close (one to six seconds, as the polling has slowed), then the detail is taken as it is. */
const SETTLING_READS = 6;

/**
 * When a job's detail is final. The job's row ends first (its activity
 * commits), its workflow closes a moment later: a detail read in between
 * says COMPLETED beside a workflow still RUNNING. So a finished job is
 * read again until its workflow has closed too (or Temporal gave no
 * answer), for a few reads at most: a workflow that stays open (no worker
 * left to close it) must not keep the command waiting for a job that is done.
 */
export function jobSettled(): (detail: ProcessStatus & Partial<JobDetailExtras>) => boolean {
  let finishedReads = 0;
  return (detail) => {
    if (detail.state !== 'FINISHED' && detail.state !== 'ERROR') return false;
    finishedReads += 1;
    return detail.workflow?.status !== 'RUNNING' || finishedReads > SETTLING_READS;
  };
}
