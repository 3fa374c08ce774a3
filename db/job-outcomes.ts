import type pg from 'pg';

// Finished batches and exports as counted from the database, so the numbers
// are right however many workers ran them and survive their restarts. The
// counts are kept beside the rows by triggers (job_outcome_count,
// Migration20261127000600JobOutcomeCounts) and the oldest unfinished batch is
// the first entry of a partial index: a scrape reads a few rows, however many
// jobs the tables hold. SQL, not the EntityManager.

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
      `select coalesce(sum(completed) filter (where kind = 'batch'), 0) as "batchesCompleted",
              coalesce(sum(failed) filter (where kind = 'batch'), 0) as "batchesFailed",
              coalesce(sum(amount) filter (where kind = 'batch'), 0) as "batchChanges",
              coalesce(sum(completed) filter (where kind = 'export'), 0) as "exportsCompleted",
              coalesce(sum(failed) filter (where kind = 'export'), 0) as "exportsFailed",
              coalesce(sum(amount) filter (where kind = 'export'), 0) as "exportBytes",
              coalesce((select extract(epoch from now() - min(submitted_at)) from batch where status in ('ACCEPTED', 'PROCESSING')), 0) as "oldestUnfinishedBatchSeconds"
         from job_outcome_count`,
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
