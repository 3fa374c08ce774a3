import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openOrm } from '../../db/orm.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { TEST_TOKENS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

// The other tests build the app and the worker in-process, as vitest loads
// modules. `npm run api` and `npm run worker` load them with Node's own ESM
// loader, which is stricter (a CommonJS package's named exports, say): this
// runs the two entry points as real processes and one batch through them.
describe('the api and worker entry points as processes', () => {
  const children: ChildProcess[] = [];
  const output: string[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  function start(entry: 'api/main.ts' | 'worker/main.ts', env: NodeJS.ProcessEnv): ChildProcess {
    const child = spawn(process.execPath, [fileURLToPath(new URL(`../../${entry}`, import.meta.url))], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => output.push(`${entry}: ${chunk.toString()}`));
    children.push(child);
    return child;
  }

  it('start, apply a batch, and stop cleanly on SIGTERM', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      // A queue of its own: this worker must not take other tests' workflows.
      TEMPORAL_TASK_QUEUE: `entry-points-${randomUUID()}`,
      DATA_DIR: inject('scratchDir'),
      WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      LOG_LEVEL: 'warn',
      PORT: String(port),
      AUTH_TOKENS: JSON.stringify([{ token: TEST_TOKENS.admin, name: 'entry-admin', permissions: ['admin'] }]),
    };
    const api = start('api/main.ts', env);
    const worker = start('worker/main.ts', env);
    const baseUrl = `http://127.0.0.1:${port}`;
    await eventually(async () => {
      const health = await fetch(`${baseUrl}/health`).catch(() => undefined);
      if (api.exitCode !== null || worker.exitCode !== null) throw new Error(`an entry point exited:\n${output.join('')}`);
      return health?.status === 200 ? true : undefined;
    }, 60_000);

    // The batch goes through the processes' API; the wait for it reads the run's database, as every test's does.
    const orm = await openOrm(inject('databaseUrl'));
    try {
      const remote = {
        api: (path: string, init: RequestInit = {}) =>
          fetch(`${baseUrl}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${TEST_TOKENS.admin}` } }),
        orm,
      } as Harness;
      const applied = await applyBatch(remote, batchXml([create('a', 'Karel Hynek Mácha', { entityType: `ENTRY-${randomUUID()}` })]));
      expect(applied.revisions.get('a')?.entityId).toBeGreaterThan(0);
    } finally {
      await orm.close();
    }

    const exits = [api, worker].map((child) => once(child, 'exit'));
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    const codes = (await Promise.all(exits)).map(([code]) => code);
    expect(codes, output.join('')).toEqual([0, 0]);
  });
});
