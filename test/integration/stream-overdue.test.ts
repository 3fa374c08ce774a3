// A push stream ends by STREAM_MAX_SECONDS plus its grace whatever it is
// waiting on: here its read of the activity log is held by a lock on
// revision (in a database of its own, so no other test waits on it) past the
// stream's end. The connection is cut while the read still waits, and the
// address's slot is free again for the next stream.
import { get as httpGet, type IncomingMessage } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { ensureDatabase, migrate, openOrm } from '../../db/orm.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';
import { dropScratchDatabase, scratchDatabaseUrl } from '../support/scratch-database.ts';

describe('a push stream whose read does not return', () => {
  const databaseUrl = scratchDatabaseUrl('stream_overdue');
  let harness: Harness;

  beforeAll(async () => {
    await ensureDatabase(databaseUrl);
    const orm = await openOrm(databaseUrl);
    await migrate(orm);
    await orm.close();
    harness = await startHarness({
      worker: false,
      env: {
        DATABASE_URL: databaseUrl,
        AUTH_DISABLED: 'true',
        STREAM_MAX_SECONDS: '2',
        STREAM_SLOW_CONSUMER_SECONDS: '1',
        STREAM_CONNECTIONS_PER_ADDRESS: '1',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
    await dropScratchDatabase(databaseUrl);
  });

  it('is cut at its end while the read still waits, and frees its slot', async () => {
    const locker = new pg.Client({ connectionString: withDatabaseUser(databaseUrl) });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table revision in access exclusive mode');
      const stream = await new Promise<IncomingMessage>((resolve, reject) =>
        httpGet(`${harness.baseUrl}/api/v2/stream`, resolve).on('error', reject),
      );
      expect(stream.statusCode).toBe(200);
      const ended = new Promise<string>((resolve) => {
        stream.on('error', () => undefined);
        stream.on('data', () => undefined);
        stream.once('close', () => resolve('closed'));
      });
      // The stream's read is queued behind the lock.
      await eventually(
        async () => {
          const waiting = await locker.query<{ n: string }>(
            `select count(*) as n from pg_locks where relation = 'revision'::regclass and not granted`,
          );
          return Number(waiting.rows[0]!.n) > 0 ? true : undefined;
        },
        10_000,
        "the stream's read waiting on the lock",
      );
      expect(await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve('still open'), 30_000))])).toBe('closed');
      // Still held: the stream ended without its read.
      const held = await locker.query<{ n: string }>(
        `select count(*) as n from pg_locks where relation = 'revision'::regclass and mode = 'AccessExclusiveLock' and granted`,
      );
      expect(Number(held.rows[0]!.n)).toBe(1);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    const next = await harness.api('/api/v2/stream');
    expect(next.status).toBe(200);
    await next.body?.cancel();
  });
});
