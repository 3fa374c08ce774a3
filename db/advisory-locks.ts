import type { Queryable } from './sql.ts';

/**
 * The first key of every transaction-scoped advisory lock the service takes
 * (pg_advisory_xact_lock(namespace, key)), one per kind of thing locked, so
 * kinds never collide. Keys inside a namespace are hashtext() of the thing.
 */
export const LOCK_NAMESPACES = {
  /** Held by transaction_committing() from drawing commit_seq until the commit (Migration20261124000040CommitOrder). */
  commitOrder: 1,
  /** A client-given entity UUID a batch creates: the second creator waits, then sees it taken. */
  entityUuid: 2,
  /** An (entity type, normalised preferred name) a batch writes: the second writer waits, then sees the holder. */
  preferredName: 3,
} as const;

/**
 * Locks every key until the end of the transaction, in one order (sorted
 * hashes) for every caller: two transactions locking overlapping sets wait
 * for each other, never deadlock. A hash collision costs a needless wait
 * only. A transaction takes the keys of one namespace in one call.
 */
export async function lockKeys(client: Queryable, namespace: number, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await client.query('select lock_keys($1, array(select hashtext(k) from unnest($2::text[]) k))', [namespace, keys]);
}
