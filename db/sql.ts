import type pg from 'pg';

export type Queryable = pg.Pool | pg.PoolClient;

/** Runs `work` in one transaction on one pooled connection; rolls back on any error. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export interface Column {
  name: string;
  /** PostgreSQL element type of the column, e.g. 'bigint', 'uuid', 'jsonb'. */
  type: string;
}

const ROWS_PER_STATEMENT = 5000;

/**
 * Inserts many rows with one `insert … select from unnest(…)` per few
 * thousand rows: one round trip per chunk and a fixed number of parameters,
 * whatever the row count.
 */
export async function insertRows(db: Queryable, table: string, columns: readonly Column[], rows: readonly unknown[][]): Promise<void> {
  const names = columns.map((column) => column.name).join(', ');
  const arrays = columns.map((column, index) => `$${index + 1}::${column.type}[]`).join(', ');
  const sql = `insert into ${table} (${names}) select * from unnest(${arrays})`;
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
    const params = columns.map((_, index) => chunk.map((row) => row[index] ?? null));
    await db.query(sql, params);
  }
}
