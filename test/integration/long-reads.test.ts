import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.ts';
import { loadTokens } from '../../api/auth/tokens.ts';
import { loadConfig } from '../../config.ts';
import type { Db } from '../../db/index.ts';
import { createLogger } from '../../logger.ts';
import { openApiDb } from '../../services/deps.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { pollUntil, sleep } from '../support/poll.ts';

// Slow readers against the real stack: API processes as serve.ts opens them
// (a long-read pool of their own, acquire and statement timeouts), sharing
// one database and so one limiter. Outcomes only: who was answered, refused
// (with Retry-After) or cut, and that an ordinary client never noticed.

// Records with long names, so that a synchronous v1 snapshot of all of them
// (about 8 MB) is more than the loopback's socket buffers hold: its reader
// really keeps the server writing, and its cursor open, at the pace it reads.
const RECORDS = 2000;
const ABANDON_AFTER_MS = 90_000;
const LONG_NAME = 'Long Reader Record '.padEnd(4000, 'x');

interface Api {
  url: string;
  db: Db;
  close(): Promise<void>;
}

type Outcome =
  | { kind: 'abandoned'; was: Outcome }
  | { kind: 'complete'; status: number; bytes: number }
  | { kind: 'refused'; status: number; retryAfter: string | undefined }
  | { kind: 'cut'; status: number | undefined; bytes: number };

/** A GET (or a POST of `jsonBody`) read at `bytesPerTick` every 100 ms from a paused socket: a client with a small receive window. */
function trickleGet(
  url: string,
  path: string,
  token: string,
  bytesPerTick = 256,
  jsonBody?: string,
): { headers: Promise<number>; outcome: Promise<Outcome>; stop(): void } {
  const { hostname, port } = new URL(url);
  const startedAt = Date.now();
  const socket = connect(Number(port), hostname);
  const request =
    jsonBody === undefined
      ? `GET ${path} HTTP/1.1\r\n`
      : `POST ${path} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(jsonBody)}\r\n`;
  socket.write(`${request}Host: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n${jsonBody ?? ''}`);
  socket.pause();
  let received = Buffer.alloc(0);
  let status: number | undefined;
  let onHeaders: (status: number) => void = () => undefined;
  const headers = new Promise<number>((resolve) => (onHeaders = resolve));
  const tick = setInterval(() => {
    const chunk = socket.read(bytesPerTick) ?? socket.read();
    if (chunk) received = Buffer.concat([received, chunk]);
    if (status === undefined) {
      const line = /^HTTP\/1\.1 (\d{3})/.exec(received.subarray(0, 20).toString('latin1'));
      if (line) onHeaders((status = Number(line[1])));
    }
  }, 100);
  const outcome = new Promise<Outcome>((resolve) => {
    const finish = (ended: boolean) => {
      clearInterval(tick);
      const text = received.toString('utf8');
      const head = text.split('\r\n\r\n')[0] ?? '';
      const code = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? Number.NaN);
      const retryAfter = /\r\nretry-after: *(\S+)/i.exec(head)?.[1];
      if (code === 429 || code === 503) resolve({ kind: 'refused', status: code, retryAfter });
      else if (ended && /\r\n0\r\n\r\n$/.test(text)) resolve({ kind: 'complete', status: code, bytes: received.length });
      else resolve({ kind: 'cut', status: Number.isNaN(code) ? undefined : code, bytes: received.length });
    };
    socket.on('end', () => {
      // The rest of the buffer, read at once: the server has ended its answer.
      for (let chunk = socket.read(); chunk; chunk = socket.read()) received = Buffer.concat([received, chunk]);
      finish(true);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(false));
  });
  // A reader still waiting after this long hung: what must never happen.
  const abandon = setTimeout(() => socket.destroy(), ABANDON_AFTER_MS);
  const ended = outcome
    .then((end) => (Date.now() - startedAt >= ABANDON_AFTER_MS ? ({ kind: 'abandoned', was: end } as const) : end))
    .finally(() => clearTimeout(abandon));
  return { headers, outcome: ended, stop: () => socket.destroy() };
}

describe('long reads beside ordinary clients', () => {
  let harness: Harness;
  const apis: Api[] = [];
  let feedPath: (pageSize: number) => string;
  let someId: number;
  let snapshotBody: string;

  /** An API process as serve.ts starts one, on this run's database and Temporal. */
  async function startApi(env: Record<string, string>): Promise<Api> {
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: harness.config.DATABASE_URL,
      TEMPORAL_ADDRESS: harness.config.temporalAddress,
      DATA_DIR: harness.config.DATA_DIR,
      TEMPORAL_TASK_QUEUE: harness.config.TEMPORAL_TASK_QUEUE,
      LOG_LEVEL: 'silent',
      AUTH_TOKENS: harness.config.AUTH_TOKENS,
      SUBMISSION_RATE_LIMIT: '0',
      ...env,
    });
    const db = await openApiDb(config);
    const server: Server = buildApp({
      config,
      db,
      temporal: harness.temporal,
      log: createLogger('silent', 'test'),
      tokens: loadTokens(config, () => undefined),
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const api = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      db,
      async close() {
        server.close();
        server.closeAllConnections();
        await db.close();
      },
    };
    apis.push(api);
    return api;
  }

  beforeAll(async () => {
    harness = await startHarness();
    const first = await applyBatch(harness, batchXml([create('a', 'Long read start')]));
    const commands = Array.from({ length: RECORDS }, (_, index) => create(`r${index}`, `${LONG_NAME} ${index}`));
    const seeded = await applyBatch(harness, batchXml(commands));
    snapshotBody = JSON.stringify([...seeded.revisions.values()].map((revision) => revision.entityId));
    someId = first.revisions.get('a')!.entityId;
    feedPath = (pageSize) => `/api/v2/updates?fromTransId=${first.transaction}&toTransId=${seeded.transaction}&page=1&pageSize=${pageSize}`;
    await harness.sql(`delete from long_read_lease`);
  }, 300_000);

  afterAll(async () => {
    for (const api of apis) await api.close();
    await harness?.close();
  });

  it('keeps every GET of an ordinary client answered while thirty readers hold feed pages open at a trickle', async () => {
    const api = await startApi({
      LONG_READ_CONNECTIONS: '2',
      DB_ACQUIRE_TIMEOUT_MS: '500',
      LONG_READS_PER_PRINCIPAL: '100',
      LONG_READ_IDLE_TIMEOUT_MS: '1000',
      LONG_READ_STALL_SECONDS: '2',
      LONG_READ_MAX_SECONDS: '6',
    });
    // Half of them page the feed, half fetch every record in a synchronous v1 snapshot.
    const readers = Array.from({ length: 30 }, (_, index) =>
      index % 2 === 0
        ? trickleGet(api.url, feedPath(RECORDS), TEST_TOKENS.read, 16_384)
        : trickleGet(api.url, '/api/v1/export/snapshots', TEST_TOKENS.export, 16_384, snapshotBody),
    );
    const ordinary: number[] = [];
    const headers = { authorization: `Bearer ${TEST_TOKENS.admin}` };
    let settled = false;
    const outcomes = Promise.all(readers.map((reader) => reader.outcome)).finally(() => (settled = true));
    // An ordinary client keeps reading records and searching for as long as the readers hold on.
    while (!settled || ordinary.length < 20) {
      ordinary.push((await fetch(`${api.url}/api/v2/entities/${someId}`, { headers })).status);
      ordinary.push(
        (
          await fetch(`${api.url}/api/v2/search?page=1&pageSize=5`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ types: ['PERSON'] }),
          })
        ).status,
      );
      await sleep(50);
    }
    const ends = await outcomes;

    expect(ordinary.every((status) => status === 200)).toBe(true);
    expect(ends.filter((end) => end.kind === 'abandoned')).toEqual([]);
    for (const end of ends) {
      if (end.kind === 'refused') expect(end.retryAfter).toMatch(/^\d+$/);
      if (end.kind === 'complete') expect(end.status).toBe(200);
      // A cut reader was answered 200 and then lost its connection: never a 5xx other than 503.
      if (end.kind === 'cut') expect(end.status === undefined || end.status === 200).toBe(true);
    }
    // The slow readers were not all served: the long-read pool (two connections) bounded them.
    expect(ends.filter((end) => end.kind !== 'complete').length).toBeGreaterThan(0);
    // Every lease is given back, and the pool serves a whole page again.
    await pollUntil(
      async () =>
        (await harness.sql<{ n: number }>('select count(*)::int as n from long_read_lease where expires_at >= now()'))[0]!.n === 0
          ? true
          : undefined,
      { timeoutMs: 30_000, what: 'the leases to be released' },
    );
    const page = await fetch(`${api.url}${feedPath(RECORDS)}`, { headers });
    expect(page.status).toBe(200);
    expect((await page.text()).match(/<(\w+:)?revInfo\b/g)?.length ?? 0).toBe(RECORDS);
    const snapshot = await fetch(`${api.url}/api/v1/export/snapshots`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: snapshotBody,
    });
    expect(snapshot.status).toBe(200);
    expect((await snapshot.text()).split(LONG_NAME).length - 1).toBe(RECORDS);
  }, 150_000);

  it('answers 503 with Retry-After when the long-read pool has no connection to give, or a feed statement runs too long', async () => {
    const api = await startApi({ LONG_READ_CONNECTIONS: '1', DB_ACQUIRE_TIMEOUT_MS: '300', LONG_READ_STATEMENT_TIMEOUT_MS: '2000' });
    const headers = { authorization: `Bearer ${TEST_TOKENS.admin}` };
    // A lock the feed's first statement waits for: the long-read pool's one connection is held by that wait.
    const locker = await harness.db.pool.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table transaction in access exclusive mode');
      const held = fetch(`${api.url}${feedPath(10)}`, { headers });
      await pollUntil(
        async () =>
          (await harness.sql(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%from transaction%'`)).length >
          0
            ? true
            : undefined,
        { timeoutMs: 10_000, what: 'the feed read to wait for the lock' },
      );
      const refused = await fetch(`${api.url}${feedPath(10)}`, { headers });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      // The ordinary reads do not use that pool.
      expect((await fetch(`${api.url}/api/v2/entities/${someId}`, { headers })).status).toBe(200);
      // The held read gives up at its statement timeout: 503 as well, and its connection is back.
      const timedOut = await held;
      expect(timedOut.status).toBe(503);
      expect(timedOut.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await locker.query('rollback');
      locker.release();
    }
    expect((await fetch(`${api.url}${feedPath(10)}`, { headers })).status).toBe(200);
  });

  it('limits long reads per principal across API processes, and gives a principal its slots back when a process dies holding them', async () => {
    const env = { LONG_READS_PER_PRINCIPAL: '2', LONG_READ_IDLE_TIMEOUT_MS: '60000', LONG_READ_STALL_SECONDS: '60' };
    const [one, two] = [await startApi(env), await startApi(env)];
    // Snapshots larger than the socket buffers: a response holds its slot until it is written, and these are not, yet.
    const holders = [
      trickleGet(one.url, '/api/v1/export/snapshots', TEST_TOKENS.export, 16, snapshotBody),
      trickleGet(two.url, '/api/v1/export/snapshots', TEST_TOKENS.export, 16, snapshotBody),
    ];
    expect(await Promise.all(holders.map((holder) => holder.headers))).toEqual([200, 200]);

    const third = await fetch(`${one.url}${feedPath(10)}`, { headers: { authorization: `Bearer ${TEST_TOKENS.export}` } });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
    const otherPrincipal = await fetch(`${two.url}${feedPath(10)}`, { headers: { authorization: `Bearer ${TEST_TOKENS.admin}` } });
    expect(otherPrincipal.status).toBe(200);
    await otherPrincipal.text();

    for (const holder of holders) holder.stop();
    await pollUntil(
      async () =>
        (
          await harness.sql<{ n: number }>(
            `select count(*)::int as n from long_read_lease where principal = 'test-exporter' and expires_at >= now()`,
          )
        )[0]!.n === 0
          ? true
          : undefined,
      { timeoutMs: 30_000, what: 'the leases to be released' },
    );

    // A process that died holding both slots: its leases count until they lapse, and not after.
    await harness.sql(`delete from long_read_lease where principal = 'test-reader'`);
    await harness.sql(
      `insert into long_read_lease (principal, slot, holder, expires_at) values ('test-reader', 1, 'dead', now() + interval '1 hour'), ('test-reader', 2, 'dead', now() + interval '1 hour')`,
    );
    expect((await fetch(`${two.url}${feedPath(10)}`, { headers: { authorization: `Bearer ${TEST_TOKENS.read}` } })).status).toBe(429);
    await harness.sql(`update long_read_lease set expires_at = now() - interval '1 second' where holder = 'dead'`);
    const after = await fetch(`${two.url}${feedPath(10)}`, { headers: { authorization: `Bearer ${TEST_TOKENS.read}` } });
    expect(after.status).toBe(200);
    await after.text();
    // The slot it got is one of the dead process's, taken over in place.
    expect((await harness.sql(`select 1 from long_read_lease where principal = 'test-reader' and holder <> 'dead'`)).length).toBe(1);
  });
});
