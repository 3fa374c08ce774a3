import type pg from 'pg';

// Leases on the long reads a principal may hold at once, shared by every API
// process. A principal has slots 1…max; a lease is the row of one slot, live
// until its expires_at unless its holder renews it. Taking one is a single
// statement that claims a free slot, or takes over one whose lease lapsed (a
// holder that died): no lock is held while a request waits, and two
// processes claiming the same slot at once cannot both win it (the primary
// key decides; the loser tries another slot).

/** Tries at claiming a slot before the principal is taken to be full: only racing claims make a try fail. */
const CLAIM_TRIES = 3;

export class LongReadLeases {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** A lease for `principal` when one of its `max` slots is free; undefined when all are held. */
  async take(principal: string, holder: string, max: number, leaseSeconds: number): Promise<string | undefined> {
    for (let attempt = 0; attempt < CLAIM_TRIES; attempt += 1) {
      const { rows } = await this.#pool.query<{ id: string | null; free: boolean }>(
        `with free as (
           select s as slot from generate_series(1, $3::int) s
            where not exists (select 1 from long_read_lease l where l.principal = $1 and l.slot = s and l.expires_at >= now())
            order by random() limit 1
         ), claimed as (
           insert into long_read_lease as l (principal, slot, holder, expires_at)
           select $1, slot, $2, now() + make_interval(secs => $4) from free
           on conflict (principal, slot) do update set id = gen_random_uuid(), holder = excluded.holder, expires_at = excluded.expires_at
            where l.expires_at < now()
           returning l.id
         )
         select (select id from claimed) as id, exists (select 1 from free) as free`,
        [principal, holder, max, leaseSeconds],
      );
      const row = rows[0]!;
      if (row.id !== null) return row.id;
      // No free slot in this statement's snapshot: the principal holds all of them.
      if (!row.free) return undefined;
    }
    return undefined;
  }

  /** Extends the leases still held; one statement for all of a process's leases. */
  async renew(ids: readonly string[], leaseSeconds: number): Promise<void> {
    if (ids.length === 0) return;
    await this.#pool.query('update long_read_lease set expires_at = now() + make_interval(secs => $2) where id = any($1::uuid[])', [
      ids,
      leaseSeconds,
    ]);
  }

  /** Frees the slot at once (its row stays, lapsed, for the next claim to take over). */
  async release(id: string): Promise<void> {
    await this.#pool.query(`update long_read_lease set expires_at = '-infinity' where id = $1`, [id]);
  }
}
