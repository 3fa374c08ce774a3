// `npm run api` with API_PROCESSES=2: two processes of a cluster behind one
// port behave as one (shared-guards.test.ts does the same for two
// separate APIs), an API process that dies is replaced while the other keeps
// serving, /metrics counts both, and SIGTERM stops them all. Each request
// goes on a connection of its own, which the cluster's primary hands to the
// processes in turn; which process answered is read from its request log line
// (pino's `pid`), matched by the X-Request-Id the test sends.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { restartDelay } from '../../api/cluster.ts';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { batchXml, create } from '../support/batches.ts';
import { TEST_TOKENS } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';
import { elzaHeaders, type TestKey } from '../support/nda-signer.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';

const SUBMISSIONS_PER_WINDOW = 3;
const run = randomUUID().slice(0, 8);
const EXPORTER = {
  name: `cluster-exporter-${run}`,
  keyId: `cluster-export-${run}`,
  secret: 'cluster-secret-export-0123456789abcdef',
  permissions: ['read', 'export'],
};
const WRITER = {
  name: `cluster-writer-${run}`,
  keyId: `cluster-write-${run}`,
  secret: 'cluster-secret-write-0123456789abcdefg',
  permissions: ['read', 'write'],
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  requestId: string;
}

describe('restarting an API process', () => {
  it('replaces one that had been running at once, and backs off on quick deaths in a row, up to 30 s', () => {
    expect([0, 1, 2, 3, 4, 8, 9, 20].map(restartDelay)).toEqual([0, 100, 200, 400, 800, 12_800, 25_600, 30_000]);
  });
});

describe('an API cluster of two processes on one port', () => {
  let primary: ChildProcess;
  let port = 0;
  const lines: Record<string, unknown>[] = [];
  const output: string[] = [];

  beforeAll(async () => {
    port = await freePort();
    primary = spawn(process.execPath, [fileURLToPath(new URL('../../api/main.ts', import.meta.url))], {
      env: {
        ...process.env,
        API_PROCESSES: '2',
        API_KEYS: JSON.stringify([EXPORTER, WRITER]),
        SUBMISSION_RATE_LIMIT: String(SUBMISSIONS_PER_WINDOW),
        SUBMISSION_RATE_WINDOW_SECONDS: '600',
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: `api-cluster-${run}`,
        DATA_DIR: inject('scratchDir'),
        LOG_LEVEL: 'info',
        PORT: String(port),
        AUTH_TOKENS: JSON.stringify([{ token: TEST_TOKENS.admin, name: 'cluster-admin', permissions: ['admin'] }]),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let partial = '';
    primary.stdout!.on('data', (chunk: Buffer) => {
      const text = partial + chunk.toString();
      const complete = text.split('\n');
      partial = complete.pop()!;
      for (const line of complete) {
        output.push(line);
        try {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not a log line
        }
      }
    });
    primary.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    await eventually(async () => {
      if (primary.exitCode !== null) throw new Error(`the API exited:\n${output.join('\n')}`);
      return lines.some((line) => line.msg === 'api listening' && line.processes === 2) ? true : undefined;
    }, 90_000);
  });

  afterAll(async () => {
    if (primary && primary.exitCode === null && primary.signalCode === null) {
      const exited = once(primary, 'exit');
      primary.kill('SIGKILL');
      await exited;
    }
    for (const pid of servingPids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });

  /** One request on a connection of its own (so that the primary picks the process). */
  function send(method: string, pathAndQuery: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    const requestId = `cluster-${randomUUID()}`;
    return new Promise((resolve, reject) => {
      const outgoing = request(
        { host: '127.0.0.1', port, method, path: pathAndQuery, agent: false, headers: { ...headers, 'x-request-id': requestId } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString(), requestId }),
          );
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.setTimeout(15_000, () => outgoing.destroy(new Error(`${method} ${pathAndQuery}: no answer within 15 s`)));
      outgoing.end(body);
    });
  }

  /** The pid of the process that logged the request, once its line is there. */
  const servedBy = (answer: Answer): Promise<number> =>
    eventually(
      async () => lines.find((line) => line.msg === 'request' && line.requestId === answer.requestId)?.pid as number | undefined,
      10_000,
    );
  function servingPids(): Set<number> {
    return new Set(lines.filter((line) => line.msg === 'request').map((line) => line.pid as number));
  }
  const sign = (key: TestKey, pathAndQuery: string, type: string) => ({
    'content-type': type,
    ...elzaHeaders(key, { host: '127.0.0.1', method: 'POST', pathAndQuery }),
  });

  it('answers a replayed export start once across both processes: the same export each time, one row', async () => {
    const path = '/api/v2/export/snapshots';
    const headers = sign(EXPORTER, path, 'application/json');
    const body = '[999999101, 999999102]';
    const together = await Promise.all([send('POST', path, headers, body), send('POST', path, headers, body)]);
    const later = await send('POST', path, headers, body);
    const answers = [...together, later];
    expect(
      answers.map((answer) => answer.status),
      `${answers.map((answer) => answer.body).join('\n')}\n${output.slice(-20).join('\n')}`,
    ).toEqual([200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    const pids = new Set(await Promise.all(answers.map(servedBy)));
    expect(pids.size, 'both processes answered').toBe(2);
    expect(pids.has(primary.pid!), 'the primary serves no request').toBe(false);

    const client = new pg.Client({ connectionString: withDatabaseUser(inject('databaseUrl')) });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string }>('select id from export_request where requested_by = $1', [EXPORTER.name]);
      expect(rows.map((row) => row.id)).toEqual([answers[0]!.body]);
    } finally {
      await client.end();
    }
  });

  it('counts the submission rate limit across both processes, and /metrics counts the requests of both', async () => {
    const path = '/api/v2/batches/test';
    const submit = () =>
      send('POST', path, sign(WRITER, path, 'application/xml'), batchXml([create('a', `Limit v clusteru ${randomUUID()}`)]));
    const allowed: Answer[] = [];
    for (let index = 0; index < SUBMISSIONS_PER_WINDOW; index += 1) allowed.push(await submit());
    expect(allowed.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const refused = [await submit(), await submit()];
    expect(refused.map((answer) => answer.status)).toEqual([429, 429]);
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(new Set(await Promise.all([...allowed, ...refused].map(servedBy))).size, 'both processes answered').toBe(2);

    const metrics = await send('GET', '/metrics', metricsAuthorization({ DATA_DIR: inject('scratchDir') }));
    expect(metrics.status).toBe(200);
    const count = (status: string) =>
      Number(
        new RegExp(
          `^http_request_duration_seconds_count\\{[^}]*route="/api/v2/batches/test"[^}]*status="${status}"[^}]*\\} (\\d+)$`,
          'm',
        ).exec(metrics.body)?.[1],
      );
    expect(count('200'), metrics.body).toBe(SUBMISSIONS_PER_WINDOW);
    expect(count('429')).toBe(2);
  });

  it('replaces a process that dies while the other keeps serving', async () => {
    const before = await Promise.all([send('GET', '/health'), send('GET', '/health')]);
    const pids = [...new Set(await Promise.all(before.map(servedBy)))];
    expect(pids).toHaveLength(2);
    const [victim, survivor] = pids as [number, number];
    process.kill(victim, 'SIGKILL');
    // Once the primary knows (a connection handed to the process in the instant it died is lost with it).
    await eventually(
      async () =>
        lines.some((line) => line.msg === 'an API process exited; starting another in its place' && line.processPid === victim) ||
        undefined,
      10_000,
    );

    const during = await Promise.all(Array.from({ length: 6 }, () => send('GET', '/health')));
    expect(during.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const replacement = await eventually(async () => {
      const answer = await send('GET', '/health');
      const pid = await servedBy(answer);
      return pid !== survivor && pid !== victim ? pid : undefined;
    }, 60_000);
    expect(replacement).not.toBe(primary.pid);
  });

  it('stops every process on SIGTERM and exits 0', async () => {
    const pids = [...servingPids()];
    const exited = once(primary, 'exit');
    primary.kill('SIGTERM');
    const [code] = await exited;
    expect(code, output.slice(-20).join('\n')).toBe(0);
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  });
});
