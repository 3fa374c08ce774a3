import type pg from 'pg';

// The submission rate limit's counter, shared by every API process: one row
// per principal holding its current window (which starts at the first
// submission after the previous window ended) and the submissions counted in
// it. A new window overwrites the row, so nothing old piles up: the table has
// one row per principal that ever submitted.

export interface SubmissionCount {
  /** Submissions in the current window, this one included. */
  count: number;
  /** When the window ends, in seconds since the epoch. */
  windowEndsAt: number;
  /** Seconds from now until the window ends. */
  secondsLeft: number;
}

/** The counters (db.submissionRate). */
export class SubmissionRate {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * Counts one submission of `principal` in one round trip; the window is
   * `windowSeconds` long, measured by the database's clock (the same for every
   * API process).
   */
  async count(principal: string, windowSeconds: number): Promise<SubmissionCount> {
    const { rows } = await this.#pool.query<SubmissionCount>(
      `insert into submission_rate as r (principal, window_started_at, count) values ($1, now(), 1)
       on conflict (principal) do update set
         window_started_at = case when r.window_started_at > now() - make_interval(secs => $2) then r.window_started_at else now() end,
         count = case when r.window_started_at > now() - make_interval(secs => $2) then least(r.count, 2147483646) + 1 else 1 end
       returning count, extract(epoch from window_started_at + make_interval(secs => $2))::float8 as "windowEndsAt",
         extract(epoch from window_started_at + make_interval(secs => $2) - now())::float8 as "secondsLeft"`,
      [principal, windowSeconds],
    );
    return rows[0]!;
  }
}
