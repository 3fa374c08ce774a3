import type pg from 'pg';
import { inTransaction } from '../sql.ts';
import { ApplyTransaction } from './transaction.ts';

export { ApplyTransaction, applyTransaction } from './transaction.ts';
export { type StepLoad } from './write-plan.ts';
export { encodeStagedEntries } from './names.ts';
export { encodeResultLines } from './result-lines.ts';

/**
 * Where batches become revisions: the apply's transaction handle, over a
 * connection the caller holds (the batch activity commits the job row in
 * the same transaction), or in a transaction of its own that is always
 * rolled back (a test batch).
 */
export interface RevisionStore {
  /** The apply's handle on a transaction already begun on `client`; the caller commits or rolls back. */
  within(client: pg.PoolClient): ApplyTransaction;
  /**
   * Runs `work` in a transaction of its own, committed when `work` resolves
   * and rolled back when it throws: the batch activity's apply, whose job
   * row ends in the same transaction (`ApplyTransaction.finishBatch`).
   */
  committed<T>(work: (transaction: ApplyTransaction) => Promise<T>): Promise<T>;
  /** Runs `work` in a transaction that is rolled back whatever happens: nothing it does is kept. */
  rolledBack<T>(work: (transaction: ApplyTransaction) => Promise<T>): Promise<T>;
}

export function revisionStore(pool: pg.Pool): RevisionStore {
  return {
    within: (client) => new ApplyTransaction(client, pool),
    committed: (work) => inTransaction(pool, (client) => work(new ApplyTransaction(client, pool))),
    async rolledBack(work) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        return await work(new ApplyTransaction(client, pool));
      } finally {
        await client.query('rollback').catch(() => undefined);
        client.release();
      }
    },
  };
}
