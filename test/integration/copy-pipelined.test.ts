import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { encodeCopyLoad, sendCopyLoads } from '../../db/copy.ts';

// Several COPYs sent as one query, all their data written before the server
// asks for it (the apply's groups): every table gets its rows, and a COPY
// that fails rejects and leaves the connection usable for the rollback.

describe('COPYs sent as one query', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({
      connectionString: withDatabaseUser(process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres'),
      max: 1,
    });
  });
  afterAll(() => pool.end());

  async function withTables<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('create temporary table a (id int primary key, text text) on commit drop');
      await client.query('create temporary table b (id int primary key) on commit drop');
      return await work(client);
    } finally {
      await client.query('rollback').catch(() => undefined);
      client.release();
    }
  }

  it('writes each load into its table, in order, large loads in many chunks too', async () => {
    await withTables(async (client) => {
      const many = Array.from({ length: 20_000 }, (_, index) => [index, `row ${index}\twith a tab\\ and ${'x'.repeat(100)}`]);
      await sendCopyLoads(client, [
        encodeCopyLoad('a', ['id', 'text'], many),
        encodeCopyLoad('b', ['id'], []),
        encodeCopyLoad('b', ['id'], [[1], [2]]),
      ]);
      const { rows } = await client.query<{ a: number; b: number; text: string }>(
        'select (select count(*)::int from a) as a, (select count(*)::int from b) as b, (select text from a where id = 19999) as text',
      );
      expect(rows[0]).toEqual({ a: 20_000, b: 2, text: `row 19999\twith a tab\\ and ${'x'.repeat(100)}` });
      expect(encodeCopyLoad('a', ['id', 'text'], many).chunks.length).toBeGreaterThan(1);
    });
  });

  it('rejects on a failing COPY and leaves the connection ready, whatever data was still coming', async () => {
    await withTables(async (client) => {
      const many = Array.from({ length: 20_000 }, (_, index) => [index]);
      // The second COPY fails on its second row; the third one's data is already sent.
      const sent = sendCopyLoads(client, [
        encodeCopyLoad('a', ['id'], [[1]]),
        encodeCopyLoad('b', ['id'], [[5], [5], ...many.slice(10)]),
        encodeCopyLoad('a', ['id'], [[2]]),
      ]);
      await expect(sent).rejects.toThrow(/duplicate key/);
      await expect(client.query('select 1')).rejects.toThrow(/current transaction is aborted/);
      await client.query('rollback');
      expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    });
  });

  it('sends nothing when every load is empty', async () => {
    await withTables(async (client) => {
      await sendCopyLoads(client, [encodeCopyLoad('a', ['id'], [])]);
      expect((await client.query('select count(*)::int as n from a')).rows).toEqual([{ n: 0 }]);
    });
  });
});
