import type pg from 'pg';

// Finished batches and exports as counted from the database, so the numbers
// are right however many workers ran them and survive their restarts. One
// aggregate over both tables in one round trip: SQL, not the EntityManager.

export interface OutcomeCounts {
  batchesCompleted: number;
  /**
   * Every failed attempt: a FAILED batch sent again is revived under its id
   * with attempt + 1, so the earlier failures live on in `attempt` and the
   * count never goes down.
   */
  batchesFailed: number;
  /** Changes written by completed batches (a failed batch writes none). */
  batchChanges: number;
  /** Exports that completed, expired ones included: expiry deletes the file, not the outcome. */
  exportsCompleted: number;
  exportsFailed: number;
  exportBytes: number;
  /** Seconds since the oldest batch still ACCEPTED or PROCESSING was submitted; 0 when none is. */
  oldestUnfinishedBatchSeconds: number;
}

export class JobOutcomes {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async count(): Promise<OutcomeCounts> {
    const { rows } = await this.#pool.query<Record<keyof OutcomeCounts, string>>(
      `select b.completed as "batchesCompleted", b.failed as "batchesFailed", b.changes as "batchChanges",
              e.completed as "exportsCompleted", e.failed as "exportsFailed", e.bytes as "exportBytes",
              b.oldest as "oldestUnfinishedBatchSeconds"
         from (select count(*) filter (where status = 'COMPLETED') as completed,
                      count(*) filter (where status = 'FAILED') + coalesce(sum(attempt - 1), 0) as failed,
                      coalesce(sum(changes_total) filter (where status = 'COMPLETED'), 0) as changes,
                      coalesce(extract(epoch from now() - min(submitted_at) filter (where status in ('ACCEPTED', 'PROCESSING'))), 0) as oldest
                 from batch) b,
              (select count(*) filter (where status in ('COMPLETED', 'EXPIRED')) as completed,
                      count(*) filter (where status = 'FAILED') as failed,
                      coalesce(sum(bytes) filter (where status in ('COMPLETED', 'EXPIRED')), 0) as bytes
                 from export_request) e`,
    );
    const row = rows[0]!;
    return {
      batchesCompleted: Number(row.batchesCompleted),
      batchesFailed: Number(row.batchesFailed),
      batchChanges: Number(row.batchChanges),
      exportsCompleted: Number(row.exportsCompleted),
      exportsFailed: Number(row.exportsFailed),
      exportBytes: Number(row.exportBytes),
      oldestUnfinishedBatchSeconds: Number(row.oldestUnfinishedBatchSeconds),
    };
  }
}
