import type { Queryable } from './sql.ts';

/**
 * What a batch claims for the length of its transaction, so that another
 * batch claiming the same key waits for its commit (and then sees what it
 * wrote), while batches claiming different keys never wait for each other.
 */
export const CLAIM_KINDS = {
  /** A client-given entity UUID a batch creates: the second creator waits, then finds it taken. */
  entityUuid: 1,
  /** An entity type and normalised preferred name a batch writes: the second writer waits, then sees the holder. */
  preferredName: 2,
} as const;

/**
 * Claims every key until the end of the transaction: inserts them into
 * write_claim in sorted order, then deletes them again. The unique index
 * makes an insert of a key that an open transaction inserted wait for that
 * transaction's end, deleted or not; so two transactions claiming
 * overlapping sets wait for each other, in one order, never deadlock. Rows,
 * not advisory locks: a batch may claim 100,000 keys, which the shared lock
 * table cannot hold (it ran out of shared memory at 10,000). A transaction
 * claims one kind's keys in one call, kinds in CLAIM_KINDS order.
 */
export async function claimKeys(client: Queryable, kind: number, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  // The keys as one JSON text: pg's own array parameter builds a string per key (some 100 MB at 320,000 keys).
  // The claimed rows are deleted again by their tuple ids (this transaction's own rows: nothing else moves them), not
  // looked up again by key in the index: a third less of PostgreSQL's CPU at 100,000 keys.
  const { rows } = await client.query<{ tids: string }>(
    `with claimed as (insert into write_claim (kind, key) select $1, k from json_array_elements_text($2::json) k group by k order by k returning ctid)
     select array_agg(ctid)::text as tids from claimed`,
    [kind, JSON.stringify(keys)],
  );
  await client.query('delete from write_claim where ctid = any($1::tid[])', [rows[0]!.tids]);
}
