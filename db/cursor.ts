import type pg from 'pg';
import Cursor from 'pg-cursor';
import { watchConnection } from './connection-watch.ts';

const ROWS_PER_READ = 500;

/**
 * Streams the rows of a query through a server-side cursor on its own pooled
 * connection, a cursor read (a page of rows) at a time, the next one read
 * while the caller handles this one: memory stays flat (two pages at most)
 * whatever the row count, with one await per page instead of one per row.
 * Stopping early (a client that hangs up) closes the cursor and returns the
 * connection.
 * `inSnapshot` runs first in the cursor's transaction: what it reads is of
 * the same snapshot as every row.
 */
export async function* streamPages<T>(
  pool: pg.Pool,
  sql: string,
  params: unknown[],
  rowsPerRead = ROWS_PER_READ,
  inSnapshot?: (client: pg.PoolClient) => Promise<void>,
): AsyncGenerator<T[]> {
  const client = await pool.connect();
  const connection = watchConnection(client);
  let cursor: Cursor<T> | undefined;
  let pending: Promise<T[]> | undefined;
  let broken = false;
  try {
    // A cursor needs a transaction to outlive one read; repeatable read keeps every page consistent.
    await client.query('begin isolation level repeatable read read only');
    // What the caller reads first takes the snapshot the cursor then reads in.
    await inSnapshot?.(client);
    cursor = client.query(new Cursor<T>(sql, params));
    // One read ahead: PostgreSQL makes the next page while the caller writes this one.
    const readAhead = (open: Cursor<T>) => {
      const read = connection.settles(open.read(rowsPerRead));
      // Handled now (it is awaited later): a failure while the caller holds a page is not an unhandled rejection.
      read.catch(() => undefined);
      return read;
    };
    pending = readAhead(cursor);
    while (pending) {
      const rows = await pending;
      pending = undefined;
      if (rows.length === 0) return;
      if (rows.length === rowsPerRead) pending = readAhead(cursor);
      yield rows;
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    // A read still under way (the caller stopped early) ends before the cursor closes.
    if (
      pending &&
      !(await pending.then(
        () => true,
        () => false,
      ))
    )
      broken = true;
    // A cursor closes by a round trip that a dead connection never answers (pg-cursor waits for it forever):
    // after a failure the connection is dropped instead, and PostgreSQL ends its transaction with it.
    if (!broken && cursor) broken = !(await connection.succeeds(() => cursor!.close()));
    if (!broken) broken = !(await connection.succeeds(() => client.query('rollback')));
    connection.stop();
    client.release(broken);
  }
}
