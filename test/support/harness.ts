// Builds the real service in-process for a test file: the Koa app on an
// ephemeral port, a real worker (both lanes) on its own task queue, the
// shared Temporal dev server and the run's PostgreSQL database.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { SdkComponent, type Logger, type LogLevel, type LogMetadata } from '@temporalio/common';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type pg from 'pg';
import { inject } from 'vitest';
import { buildApp } from '../../api/app.ts';
import { loadTokens } from '../../api/auth/tokens.ts';
import { loadConfig, type Config } from '../../config.ts';
import { ValidationPool } from '../../engine/validation/index.ts';
import { openDb, type Db } from '../../db/index.ts';
import { createLogger } from '../../logger.ts';
import { makeVersionCurrent } from '../../temporal/client/worker-deployment.ts';
import { bundleBuildId } from '../../worker/bundle.ts';
import { createWorker, type ServiceWorker } from '../../worker/create-worker.ts';

/** One token per permission (and an admin), so tests can act as each kind of client. */
export const TEST_TOKENS = {
  admin: 'test-token-admin-0000000000000000',
  read: 'test-token-read-00000000000000000',
  write: 'test-token-write-0000000000000000',
  force: 'test-token-force-0000000000000000',
  export: 'test-token-export-000000000000000',
} as const;
const TEST_TOKEN_ENTRIES = JSON.stringify([
  { token: TEST_TOKENS.admin, name: 'test-admin', permissions: ['admin'] },
  { token: TEST_TOKENS.read, name: 'test-reader', permissions: ['read'] },
  { token: TEST_TOKENS.write, name: 'test-writer', permissions: ['read', 'write'] },
  { token: TEST_TOKENS.force, name: 'test-forcer', permissions: ['read', 'write', 'force'] },
  { token: TEST_TOKENS.export, name: 'test-exporter', permissions: ['read', 'export'] },
]);

/** One HMAC API key per permission (and an admin), signed as the registry's client signs. */
export const TEST_KEYS = {
  admin: { keyId: 'test-key-admin', secret: 'test-key-secret-admin-0123456789abcdef' },
  read: { keyId: 'test-key-read', secret: 'test-key-secret-read-0123456789abcdefg' },
  write: { keyId: 'test-key-write', secret: 'test-key-secret-write-0123456789abcdef' },
  export: { keyId: 'test-key-export', secret: 'test-key-secret-export-0123456789abcde' },
} as const;
const TEST_KEY_ENTRIES = JSON.stringify([
  { name: 'key-admin', ...TEST_KEYS.admin, permissions: ['admin'] },
  { name: 'key-reader', ...TEST_KEYS.read, permissions: ['read'] },
  { name: 'key-writer', ...TEST_KEYS.write, permissions: ['read', 'write'] },
  { name: 'key-exporter', ...TEST_KEYS.export, permissions: ['read', 'export'] },
]);

export interface Harness {
  config: Config;
  db: Db;
  temporal: Client;
  baseUrl: string;
  worker: ServiceWorker | undefined;
  /** fetch against the app, as the admin unless `as` names another token. */
  api(path: string, init?: RequestInit & { as?: keyof typeof TEST_TOKENS | null }): Promise<Response>;
  /** A query on the run's database, with $1 parameters as the service's own SQL; the rows. */
  sql<T extends pg.QueryResultRow = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Start without a worker to observe batches before anything runs them. */
  worker?: boolean;
  /** Workers polling the task queue, as several worker processes would (default 1). */
  workers?: number;
  afterWriteStep?: (batchId: string, done: number, attempt: number) => void | Promise<void>;
  /** Records per export progress step, and a hook after each step (throw to crash the attempt). */
  exportRecordsPerStep?: number;
  afterExportStep?: (exportId: string, entitiesWritten: number, attempt: number) => void | Promise<void>;
  /** The entry of the API's validation threads in place of engine/validation/thread.ts (test/support/validation-crash.ts). */
  validationThreadEntry?: URL;
  /**
   * Workers of a worker deployment of the harness's own (named after its task
   * queue; build id: the bundle's hash), its version made current, as the
   * service's workers run (WORKER_VERSIONING). Default: unversioned.
   */
  versioned?: boolean;
}

let runtimeInstalled = false;
const coreWarnings: string[] = [];

/**
 * The warnings of the Temporal SDK's core (its native half) in this test
 * process so far. Each is also printed, under the test that caused it; a
 * test that must leave none (a terminated job ends cleanly) asserts so.
 */
export function temporalCoreWarnings(): readonly string[] {
  return coreWarnings;
}

/**
 * The SDK's logs: errors printed; the core's warnings (forwarded here, not
 * written to stderr by the native side) recorded and printed; the rest,
 * such as the worker's "Activity failed" of a test's deliberate failure,
 * dropped.
 */
const sdkLogger: Logger = {
  log(level: LogLevel, message: string, meta?: LogMetadata) {
    if (level === 'ERROR') console.error(message);
    if (level === 'WARN' && meta?.sdkComponent === SdkComponent.core) {
      coreWarnings.push(message);
      const { spanContexts: _spans, sdkComponent: _component, ...fields } = meta;
      console.warn(`Temporal SDK core: ${message}`, fields);
    }
  },
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message, meta) => sdkLogger.log('WARN', message, meta),
  error: (message, meta) => sdkLogger.log('ERROR', message, meta),
};

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  if (!runtimeInstalled) {
    Runtime.install({ logger: sdkLogger, telemetryOptions: { logging: { forward: {} } } });
    runtimeInstalled = true;
  }
  const config = loadConfig({
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    DATA_DIR: inject('scratchDir'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    AUTH_TOKENS: TEST_TOKEN_ENTRIES,
    ...(options.env?.API_KEYS_FILE === undefined ? { API_KEYS: TEST_KEY_ENTRIES } : {}),
    // The rate limit counts in the run's one database, per principal name: left on, one file's
    // submissions would count against the next file's. Files that test the limit set it.
    SUBMISSION_RATE_LIMIT: '0',
    EXPORT_RATE_LIMIT: '0',
    // The same for the long reads' leases, and for failed authentications (every test calls from
    // 127.0.0.1, and many fail on purpose): files that test them set them.
    LONG_READS_PER_PRINCIPAL: '0',
    OAI_ANONYMOUS_PER_ADDRESS: '0',
    OAI_ANONYMOUS_TOTAL: '0',
    // Exports: one file's identical export would be another's answer, and its running ones would count against the next.
    EXPORT_REUSE_SECONDS: '0',
    EXPORTS_RUNNING_PER_PRINCIPAL: '0',
    EXPORT_DISK_BYTES_PER_PRINCIPAL: '0',
    UPLOADS_PER_PRINCIPAL: '0',
    AUTH_FAILURE_LIMIT: '0',
    ...options.env,
  });
  const log = createLogger(config.LOG_LEVEL, 'test');
  const db = await openDb(config.DATABASE_URL, {
    feedRangeRetentionDays: config.FEED_RANGE_RETENTION_DAYS,
    feedRangeAnchorEvery: config.FEED_RANGE_ANCHOR_EVERY,
    standbys: { urls: config.DATABASE_READ_URLS, maxLagSeconds: config.REPLICA_MAX_LAG },
  });
  const connection = await Connection.connect({ address: config.temporalAddress });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });

  // Each worker on a connection of its own: the SDK refuses two workers of one queue on one connection.
  const deployment = options.versioned
    ? { deploymentName: config.TEMPORAL_TASK_QUEUE, buildId: bundleBuildId(readFileSync(inject('workflowBundlePath'), 'utf8')) }
    : undefined;
  const workers: { worker: ServiceWorker; run: Promise<void>; connection: NativeConnection }[] = [];
  for (let index = 0; options.worker !== false && index < (options.workers ?? 1); index += 1) {
    const nativeConnection = await NativeConnection.connect({ address: config.temporalAddress });
    const worker = await createWorker({
      connection: nativeConnection,
      client: temporal,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      db,
      log,
      forceKeySecret: config.forceKeySecret,
      afterWriteStep: options.afterWriteStep,
      analyzeAfterRecords: config.ANALYZE_AFTER_RECORDS,
      exportDir: config.exportDir,
      exportRecordsPerStep: options.exportRecordsPerStep,
      afterExportStep: options.afterExportStep,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      maxConcurrentActivities: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
      interactiveActivities: config.WORKER_INTERACTIVE_ACTIVITIES,
      deployment,
    });
    workers.push({ worker, run: worker.run(), connection: nativeConnection });
  }
  if (deployment && workers.length > 0) await makeVersionCurrent(temporal, deployment, 'if-none');

  const tokens = config.AUTH_DISABLED ? 'disabled' : loadTokens(config, () => undefined);
  const validation = new ValidationPool({ threads: config.VALIDATION_THREADS, entry: options.validationThreadEntry });
  const server = buildApp({ config, db, temporal, log, tokens, validation }).listen(0, '127.0.0.1');
  // The client (fetch) drops an idle connection after 4 s, the server after 5 s: on a busy machine a
  // test's own CPU work delays both timers and the server may close a socket fetch is reusing
  // (ECONNRESET). Here the client always lets go first.
  server.keepAliveTimeout = 60_000;
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    config,
    db,
    temporal,
    worker: workers[0]?.worker,
    baseUrl: `http://127.0.0.1:${port}`,
    api(path, init = {}) {
      const { as = 'admin', ...rest } = init;
      const headers = new Headers(rest.headers);
      if (as !== null) headers.set('authorization', `Bearer ${TEST_TOKENS[as]}`);
      return fetch(`http://127.0.0.1:${port}${path}`, { ...rest, headers });
    },
    async sql<T extends pg.QueryResultRow>(query: string, params: unknown[] = []) {
      return (await db.pool.query<T>(query, params)).rows;
    },
    async close() {
      server.close();
      server.closeAllConnections();
      for (const { worker } of workers) worker.shutdown();
      await Promise.all(workers.map(({ run }) => run));
      for (const { connection: workerConnection } of workers) await workerConnection.close();
      await validation.close();
      await connection.close();
      await db.close();
    },
  };
}
