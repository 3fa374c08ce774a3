import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openDb, type Db } from '../../db/index.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { EntryProcesses, entryEnv, type EntryPoint } from '../support/entry-points.ts';
import { TEST_TOKENS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

// The other tests build the app and the worker in-process, as vitest loads
// modules. `npm run api` and `npm run worker` load them with Node's own ESM
// loader, which is stricter (a CommonJS package's named exports, say): this
// runs the two entry points as real processes and one batch through them.
describe('the api and worker entry points as processes', () => {
  const processes = new EntryProcesses();
  const { output } = processes;
  let db: Db | undefined;
  const database = async () => (db ??= await openDb(inject('databaseUrl')));
  afterAll(async () => {
    processes.killAll();
    await db?.close();
  });

  const start = (entry: EntryPoint, env: NodeJS.ProcessEnv) => processes.start(entry, env);
  const healthy = async (env: NodeJS.ProcessEnv, watched: ChildProcess[]): Promise<Harness> =>
    processes.healthyApi(env, watched, await database());

  it('start, apply a batch, and stop cleanly on SIGTERM', async () => {
    const env = await entryEnv();
    const api = start('api/main.ts', env);
    const worker = start('worker/main.ts', env);
    const remote = await healthy(env, [api, worker]);
    const applied = await applyBatch(remote, batchXml([create('a', 'Karel Hynek Mácha', { entityType: `ENTRY-${randomUUID()}` })]));
    expect(applied.revisions.get('a')?.entityId).toBeGreaterThan(0);

    const exits = [api, worker].map((child) => once(child, 'exit'));
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    const codes = (await Promise.all(exits)).map(([code]) => code);
    expect(codes, output.join('')).toEqual([0, 0]);
  });

  it('runs the lanes in two worker processes as npm start does: a small batch applies in the interactive one, a large one in the bulk one', async () => {
    const env = { ...(await entryEnv()), SMALL_BATCH_MAX_CHANGES: '1' };
    const api = start('api/main.ts', env);
    const bulk = start('worker/main.ts', { ...env, WORKER_LANES: 'bulk' });
    const interactive = start('worker/main.ts', { ...env, WORKER_LANES: 'interactive' });
    const remote = await healthy(env, [api, bulk, interactive]);
    const entityType = `LANES-${randomUUID()}`;
    const small = await applyBatch(remote, batchXml([create('a', 'Božena Němcová', { entityType })]));
    const large = await applyBatch(
      remote,
      batchXml([create('a', 'Jan Neruda', { entityType }), create('b', 'Vítězslav Hálek', { entityType })]),
    );

    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const client = new Client({ connection });
      // A worker's identity is `<pid>@<host>`: the process that started each activity.
      const startedBy = async (batchId: string) => {
        const history = await client.workflow.getHandle(batchId).fetchHistory();
        return (history.events ?? []).flatMap((event) =>
          event.activityTaskStartedEventAttributes ? [Number(event.activityTaskStartedEventAttributes.identity?.split('@')[0])] : [],
        );
      };
      expect(await startedBy(small.batchId)).toEqual([interactive.pid]);
      expect(await startedBy(large.batchId)).toEqual([bulk.pid]);
    } finally {
      await connection.close();
    }

    const exits = [api, bulk, interactive].map((child) => once(child, 'exit'));
    for (const child of [api, bulk, interactive]) child.kill('SIGTERM');
    expect(
      (await Promise.all(exits)).map(([code]) => code),
      output.join(''),
    ).toEqual([0, 0, 0]);
  });

  it("exposes the Temporal SDK's runtime metrics beside the worker's own on WORKER_METRICS_PORT", async () => {
    const env = { ...(await entryEnv()), WORKER_METRICS_PORT: String(await freePort()), WORKER_LANES: 'bulk' };
    const worker = start('worker/main.ts', env);
    const text = await eventually(async () => {
      if (worker.exitCode !== null) throw new Error(`the worker exited:\n${output.join('')}`);
      const answer = await fetch(`http://127.0.0.1:${env.WORKER_METRICS_PORT}/metrics`).catch(() => undefined);
      const body = answer?.ok ? await answer.text() : '';
      // Slots and pollers are reported once the worker polls.
      return body.includes('temporal_worker_task_slots_available') && body.includes('temporal_num_pollers') ? body : undefined;
    }, 60_000);
    expect(text).toContain('process_cpu_user_seconds_total');
    for (const series of ['temporal_worker_task_slots_available', 'temporal_num_pollers', 'temporal_request'])
      expect(text).toContain(series);
    const exit = once(worker, 'exit');
    worker.kill('SIGTERM');
    expect((await exit)[0], output.join('')).toBe(0);
  });

  it('starts an API and a worker while Temporal does not answer: the API serves reads, the worker keeps trying and never exits', async () => {
    const env: NodeJS.ProcessEnv = { ...(await entryEnv()), TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`, LOG_LEVEL: 'info' };
    const lines: string[] = [];
    const api = start('api/main.ts', env);
    const worker = start('worker/main.ts', env);
    worker.stderr!.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    worker.stdout!.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    const baseUrl = `http://127.0.0.1:${env.PORT}`;
    const health = await eventually(async () => {
      if (api.exitCode !== null) throw new Error(`the API exited:\n${output.join('')}`);
      const answer = await fetch(`${baseUrl}/health`).catch(() => undefined);
      return answer ? answer : undefined;
    }, 60_000);
    expect(await health.json()).toEqual({ status: 'degraded', database: 'up', temporal: 'down' });
    const read = await fetch(`${baseUrl}/api/v2/entities/1`, { headers: { authorization: `Bearer ${TEST_TOKENS.admin}` } });
    expect([200, 404]).toContain(read.status);
    // Two failed rounds, and the worker still runs.
    await eventually(async () => (lines.join('').split('worker could not run').length > 2 ? true : undefined), 60_000);
    expect(worker.exitCode).toBeNull();
    const exits = [api, worker].map((child) => once(child, 'exit'));
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    expect(
      (await Promise.all(exits)).map(([code]) => code),
      output.join(''),
    ).toEqual([0, 0]);
  });
});
