// The one wait for a batch to end, of the vitest tests and the fault suite:
// read from the batch's row (its status is the verdict; the API's status
// resources are tested where they are the subject). The fault suite holds a
// plain pg pool of its own (connections it may see cut), so this reads the
// row by SQL rather than through the service's repository.
import type { Queryable } from '../../db/sql.ts';
import type { Db } from '../../db/index.ts';
import type { BatchRow } from '../../db/batches.ts';
import { pollUntil } from './poll.ts';

export type EndedBatch = Pick<BatchRow, 'id' | 'status' | 'error' | 'result'>;

/** Resolves with the batch's row once it is COMPLETED or FAILED; throws after `timeoutMs` (30 s). */
export async function batchEnded(db: Queryable | { db: Db }, batchId: string, timeoutMs = 30_000): Promise<EndedBatch> {
  const pool = 'db' in db ? db.db.pool : db;
  return pollUntil(
    async () => {
      const { rows } = await pool.query<EndedBatch>('select id, status, error, result from batch where id = $1', [batchId]);
      const row = rows[0];
      return row?.status === 'COMPLETED' || row?.status === 'FAILED' ? row : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `batch ${batchId} to end`, retryErrors: false },
  );
}
