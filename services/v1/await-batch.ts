import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceDeps } from '../deps.ts';
import { pgPool } from '../../db/orm.ts';
import { findBatch, type BatchRow } from '../batches/store.ts';

const POLL_MS = 250;

export function isFinished(batch: Pick<BatchRow, 'status'>): boolean {
  return batch.status === 'COMPLETED' || batch.status === 'FAILED';
}

/**
 * Waits up to `waitMs` for a batch to finish and returns its row as it then
 * stands (finished or not). The workflow's result is only the signal to
 * look: the outcome always comes from the database, which the apply
 * activity updates in the same transaction as the writes. Should the
 * workflow be unreachable (history gone, engine down), the database is
 * polled until the deadline instead.
 */
export async function awaitBatch(deps: ServiceDeps, batchId: string, waitMs: number): Promise<BatchRow | undefined> {
  const deadline = Date.now() + waitMs;
  const pool = await pgPool(deps.orm);
  const handle = deps.temporal.workflow.getHandle(batchId);
  // Success, failure and an expired deadline all mean the same here: go and read the row.
  await deps.temporal.withDeadline(deadline, () => handle.result()).then(
    () => undefined,
    (error: unknown) => deps.log.debug({ err: error, batchId }, 'stopped waiting on the batch workflow'),
  );
  for (;;) {
    const batch = await findBatch(pool, batchId);
    const left = deadline - Date.now();
    if (!batch || isFinished(batch) || left <= 0) return batch;
    await sleep(Math.min(POLL_MS, left));
  }
}
