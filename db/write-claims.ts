import type pg from 'pg';
import { copyLinesInPieces } from './copy.ts';

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
export async function claimKeys(client: pg.PoolClient, kind: number, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  // The keys go into a temporary table by COPY, a thousand at a time, and are claimed from there in
  // PostgreSQL's own order: as one JSON text (or pg's array parameter, a string per key) they were tens of MB at
  // once in the worker at 320,000 keys (+190 MB of RSS against +31 MB this way). Not sliced in the worker: its
  // sort order is not the column's collation, and two batches must take overlapping claims in one order.
  const staged = `claim_keys_${kind}`;
  await client.query(`create temporary table ${staged} (key text not null) on commit drop`);
  await copyLinesInPieces(client, staged, 'key', keys);
  await claimStagedKeys(client, kind, `select key from ${staged}`);
  await client.query(`drop table ${staged}`);
}

/**
 * claimKeys for keys already in the transaction's tables: `keys`, a query
 * whose one column `key` gives them (repeats allowed). Claimed in
 * PostgreSQL's order, as claimKeys claims.
 */
export async function claimStagedKeys(client: pg.PoolClient, kind: number, keys: string): Promise<void> {
  // The claimed rows are deleted again by their tuple ids (this transaction's own rows: nothing else moves them), not
  // looked up again by key in the index: a third less of PostgreSQL's CPU at 100,000 keys.
  const { rows } = await client.query<{ tids: string | null }>(
    `with claimed as (insert into write_claim (kind, key) select $1, key from (${keys}) staged group by key order by key returning ctid)
     select array_agg(ctid)::text as tids from claimed`,
    [kind],
  );
  if (rows[0]!.tids !== null) await client.query('delete from write_claim where ctid = any($1::tid[])', [rows[0]!.tids]);
}
