// Builds the real service in-process for a test file: the Koa app on an
// ephemeral port, a real Worker on its own task queue, the shared Temporal
// dev server and the run's PostgreSQL database.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { buildApp } from '../../api/app.ts';
import { loadConfig, type Config } from '../../config.ts';
import { openOrm, type Orm } from '../../db/orm.ts';
import { createLogger } from '../../logger.ts';
import { createWorker } from '../../worker/create-worker.ts';

export interface Harness {
  config: Config;
  orm: Orm;
  temporal: Client;
  baseUrl: string;
  worker: Worker | undefined;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Start without a worker to observe batches before anything runs them. */
  worker?: boolean;
}

let runtimeInstalled = false;

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  if (!runtimeInstalled) {
    Runtime.install({ logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) } });
    runtimeInstalled = true;
  }
  const config = loadConfig({
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    DATA_DIR: inject('scratchDir'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    ...options.env,
  });
  const log = createLogger(config.LOG_LEVEL, 'test');
  const orm = await openOrm(config.DATABASE_URL);
  const connection = await Connection.connect({ address: config.temporalAddress });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });

  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  let nativeConnection: NativeConnection | undefined;
  if (options.worker !== false) {
    nativeConnection = await NativeConnection.connect({ address: config.temporalAddress });
    worker = await createWorker({
      connection: nativeConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      orm,
      log,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    workerRun = worker.run();
  }

  const server = buildApp({ config, orm, temporal, log }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    config,
    orm,
    temporal,
    worker,
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      server.close();
      server.closeAllConnections();
      if (worker && workerRun) {
        worker.shutdown();
        await workerRun;
      }
      await nativeConnection?.close();
      await connection.close();
      await orm.close();
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
