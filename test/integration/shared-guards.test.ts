// Two API processes on one database behave as one: the replay
// guard (with the signatures a single-writer key has used) and the
// submission rate limit live in PostgreSQL. Process A is the
// harness's app in this process; process B is `api/main.ts` as a child
// process, as production runs it, on the same database and Temporal queue.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/lib/ports.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';
import { elzaHeaders, type TestKey } from '../support/nda-signer.ts';

const SUBMISSIONS_PER_WINDOW = 3;
// Principal names of this run only: the counters are per name, in the run's one database.
const run = randomUUID().slice(0, 8);
const EXPORTER = {
  name: `guard-exporter-${run}`,
  keyId: `guard-export-${run}`,
  secret: 'guard-secret-export-0123456789abcdefgh',
  permissions: ['read', 'export'],
};
const WRITER = {
  name: `guard-writer-${run}`,
  keyId: `guard-write-${run}`,
  secret: 'guard-secret-write-0123456789abcdefghi',
  permissions: ['read', 'write'],
};
const SINGLE_WRITER = {
  name: `guard-single-${run}`,
  keyId: `guard-single-${run}`,
  secret: 'guard-secret-single-0123456789abcdefgh',
  permissions: ['read', 'write'],
  singleWriter: true,
};

describe('two API processes on one database', () => {
  let harness: Harness;
  let child: ChildProcess | undefined;
  const childOutput: string[] = [];
  let processB = '';
  let processA = '';

  beforeAll(async () => {
    const env = {
      API_KEYS: JSON.stringify([EXPORTER, WRITER, SINGLE_WRITER]),
      SUBMISSION_RATE_LIMIT: String(SUBMISSIONS_PER_WINDOW),
      SUBMISSION_RATE_WINDOW_SECONDS: '600',
    };
    harness = await startHarness({ worker: false, env });
    processA = harness.baseUrl;
    const port = await freePort();
    child = spawn(process.execPath, [fileURLToPath(new URL('../../api/main.ts', import.meta.url))], {
      env: {
        ...process.env,
        ...env,
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: harness.config.TEMPORAL_TASK_QUEUE,
        DATA_DIR: inject('scratchDir'),
        LOG_LEVEL: 'warn',
        PORT: String(port),
        AUTH_TOKENS: JSON.stringify([{ token: TEST_TOKENS.admin, name: 'guard-admin', permissions: ['admin'] }]),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => childOutput.push(chunk.toString()));
    processB = `http://127.0.0.1:${port}`;
    await eventually(async () => {
      if (child!.exitCode !== null) throw new Error(`process B exited:\n${childOutput.join('')}`);
      const health = await fetch(`${processB}/health`).catch(() => undefined);
      return health?.status === 200 ? true : undefined;
    }, 90_000);
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    await harness?.close();
  });

  const post = (baseUrl: string, pathAndQuery: string, headers: Record<string, string>, body: string) =>
    fetch(`${baseUrl}${pathAndQuery}`, { method: 'POST', headers, body });
  const sign = (key: TestKey, pathAndQuery: string, type: string, at?: Date) => ({
    'content-type': type,
    ...elzaHeaders(key, { host: '127.0.0.1', method: 'POST', pathAndQuery, at }),
  });

  it('answers a replayed export start once between them: the same export from both, one row', async () => {
    const path = '/api/v2/export/snapshots';
    const headers = sign(EXPORTER, path, 'application/json');
    const body = '[999999001, 999999002]';
    // At once, one to each process: one of them waits for the other's claim and answers with its export.
    const together = await Promise.all([post(processA, path, headers, body), post(processB, path, headers, body)]);
    const later = await post(processB, path, headers, body);
    const answers = [...together, later];
    const texts = await Promise.all(answers.map((answer) => answer.text()));
    expect(
      answers.map((answer) => answer.status),
      `${texts.join('\n')}\n${childOutput.join('')}`,
    ).toEqual([200, 200, 200]);
    expect(new Set(texts).size).toBe(1);
    const rows = await harness.sql<{ id: string }>('select id from export_request where requested_by = $1', [EXPORTER.name]);
    expect(rows.map((row) => row.id)).toEqual([texts[0]]);
  });

  it('counts the submission rate limit between them: two on A and one on B, then B and A refuse', async () => {
    const path = '/api/v2/batches/test';
    const submit = (baseUrl: string) =>
      post(baseUrl, path, sign(WRITER, path, 'application/xml'), batchXml([create('a', `Sdílený limit ${randomUUID()}`)]));
    const statuses: number[] = [];
    for (const baseUrl of [processA, processA, processB]) {
      const answer = await submit(baseUrl);
      statuses.push(answer.status);
      await answer.text();
    }
    expect(statuses).toEqual([200, 200, 200]);

    const refused = await submit(processB);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(await refused.json()).toMatchObject({ status: 429, code: 'TooManyRequests' });
    const alsoRefused = await submit(processA);
    expect(alsoRefused.status).toBe(429);
    await alsoRefused.text();
  });

  it("refuses on B a single-writer key's signature that A stored with another body", async () => {
    const path = '/api/v2/batches';
    const headers = sign(SINGLE_WRITER, path, 'application/xml');
    const [first, second] = [randomUUID(), randomUUID()];
    const stored = await post(processA, path, headers, batchXml([create('a', `Jeden zapisovatel ${first}`)], { uuid: first }));
    expect(stored.status, await stored.text()).toBe(200);
    const refused = await post(processB, path, headers, batchXml([create('b', `Jiné tělo ${second}`)], { uuid: second }));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { properties: { reason: string } }).properties.reason).toBe('SignatureReused');
    expect(await harness.sql('select id from batch where id = $1', [second])).toHaveLength(0);
  });
});
