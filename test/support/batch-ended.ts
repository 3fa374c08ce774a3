// The one wait for a batch to end, of the vitest tests and the fault suite:
// read from the batch's row (its status is the verdict; the API's status
// resources are tested where they are the subject).
import type { Queryable } from '../../db/sql.ts';
import type { Db } from '../../db/index.ts';
import { findBatch, type BatchRow } from '../../services/batches/store.ts';
import { pollUntil } from './poll.ts';

/** Resolves with the batch's row once it is COMPLETED or FAILED; throws after `timeoutMs` (30 s). */
export async function batchEnded(db: Queryable | { db: Db }, batchId: string, timeoutMs = 30_000): Promise<BatchRow> {
  const pool = 'db' in db ? db.db.pool : db;
  return pollUntil(
    async () => {
      const row = await findBatch(pool, batchId);
      return row?.status === 'COMPLETED' || row?.status === 'FAILED' ? row : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `batch ${batchId} to end`, retryErrors: false },
  );
}
