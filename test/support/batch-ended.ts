// The one wait for a batch to end, of the vitest tests and the fault suite:
// read from the batch's row (its status is the verdict; the API's status
// resources are tested where they are the subject).
import type { Queryable } from '../../db/sql.ts';
import { pgPool, type Orm } from '../../db/orm.ts';
import { findBatch, type BatchRow } from '../../services/batches/store.ts';
import { pollUntil } from './poll.ts';

/** Resolves with the batch's row once it is COMPLETED or FAILED; throws after `timeoutMs` (30 s). */
export async function batchEnded(db: Queryable | { orm: Orm }, batchId: string, timeoutMs = 30_000): Promise<BatchRow> {
  const pool = 'orm' in db ? await pgPool(db.orm) : db;
  return pollUntil(
    async () => {
      const row = await findBatch(pool, batchId);
      return row?.status === 'COMPLETED' || row?.status === 'FAILED' ? row : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `batch ${batchId} to end`, retryErrors: false },
  );
}
