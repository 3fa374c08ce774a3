import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { watchConnection } from '../../db/connection-watch.ts';
import { streamPages } from '../../db/cursor.ts';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';

// A streamed read whose connection goes away mid-read (a standby killed, an
// operator's pg_terminate_backend) must end, with the error, and give its
// connection up: pg-cursor's close waits for an answer that a dead
// connection never sends, and a read that waited on it hung its request.

const url = withDatabaseUser(process.env.TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres');

describe('a streamed read whose connection is cut', () => {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  afterAll(async () => {
    await pool.end();
    await admin.end();
  });

  /** A stream of 100,000 numbers, 100 a read, and the pid of the backend that reads them. */
  function numbers(): { pages: AsyncGenerator<{ n: number }[]>; pid: Promise<number> } {
    let found!: (pid: number) => void;
    const pid = new Promise<number>((resolve) => (found = resolve));
    const pages = streamPages<{ n: number }>(pool, 'select g as n from generate_series(1, 100000) g', [], 100, async (client) => {
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      found(rows[0]!.pid);
    });
    return { pages, pid };
  }

  const terminate = (pid: number) => admin.query('select pg_terminate_backend($1)', [pid]);

  it('ends with the connection’s error when the caller reads on', async () => {
    const { pages, pid } = numbers();
    const first = await pages.next();
    expect(first.value).toHaveLength(100);
    await terminate(await pid);
    const rest = (async () => {
      for await (const page of pages) expect(page.length).toBeGreaterThan(0);
    })();
    // The server's notice of the end, or the socket's own error when a write finds it closed.
    await expect(rest).rejects.toThrow(/terminat|EPIPE|ECONNRESET/i);
    // The broken connection was not put back: the pool serves the next query on a live one.
    const { rows } = await pool.query<{ one: number }>('select 1 as one');
    expect(rows[0]!.one).toBe(1);
  });

  it('ends when the caller stops early after the connection was cut', async () => {
    const { pages, pid } = numbers();
    await pages.next();
    await terminate(await pid);
    // The read ahead fails under the caller's feet; stopping must still close the stream.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(pages.return(undefined)).resolves.toEqual({ done: true, value: undefined });
    const { rows } = await pool.query<{ one: number }>('select 1 as one');
    expect(rows[0]!.one).toBe(1);
  });

  it('closes its cursor and keeps its connection when the caller stops early on a live one', async () => {
    const { pages, pid } = numbers();
    await pages.next();
    const backend = await pid;
    await pages.return(undefined);
    const { rows } = await admin.query<{ state: string }>('select state from pg_stat_activity where pid = $1', [backend]);
    expect(rows[0]?.state).toBe('idle');
  });

  it('rejects a step that would never settle once its connection ends', async () => {
    // pg-cursor drops the callback of a read whose portal had already completed when the connection ends.
    const client = await pool.connect();
    const connection = watchConnection(client);
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const never = connection.settles(new Promise<never>(() => undefined));
    await terminate(rows[0]!.pid);
    await expect(never).rejects.toThrow(/terminated/);
    expect(await connection.succeeds(() => client.query('select 1'))).toBe(false);
    connection.stop();
    client.release(true);
  });
});
