import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceDeps } from '../deps.ts';
import type { BatchFailure } from '../../domain/model.ts';
import { singleIssueFailure } from '../batches/status.ts';
import type { BatchRow } from '../../db/batches.ts';

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
  const handle = deps.temporal.workflow.getHandle(batchId);
  // Success, failure and an expired deadline all mean the same here: go and read the row.
  await deps.temporal
    .withDeadline(deadline, () => handle.result())
    .then(
      () => undefined,
      (error: unknown) => deps.log.debug({ err: error, batchId }, 'stopped waiting on the batch workflow'),
    );
  for (;;) {
    const batch = await deps.db.batches.find(batchId);
    const left = deadline - Date.now();
    if (!batch || isFinished(batch) || left <= 0) return batch;
    await sleep(Math.min(POLL_MS, left));
  }
}

/**
 * What the synchronous v1 POST answers for a batch still running when its
 * wait ends: a failure document (`bue`) with one message saying so. The v1
 * interface allows that POST only 200 (`bus` or `bue`) and 409, and the real
 * client (ELZA: OkHttp 4.12, read timeout 60 s) reads a 200 into its result
 * and shows the message, while a final 102 is to it an interim answer
 * followed by a dropped connection: an I/O error and no message at all. The
 * batch itself goes on; GET /batches/{bid}/response gives its real outcome.
 */
export function unfinishedOutcome(batchId: string, waitedSeconds: number): BatchFailure {
  return singleIssueFailure(
    'StillProcessing',
    `batch ${batchId} was accepted but not finished within ${waitedSeconds} s; it is still being processed and may yet be written. ` +
      `GET /api/v1/batches/${batchId}/response gives its outcome (102 until it is finished).`,
  );
}
