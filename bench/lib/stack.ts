// A whole service for benchmarks: a Temporal dev server and a scratch
// PostgreSQL database of its own, with the worker and the API as child
// processes (so their memory can be measured apart from the driver). As
// `npm start` runs it: one worker process per lane (bulk, interactive).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { ensureDatabase, migrate, openOrm } from '../../db/orm.ts';
import { ensureTemporalBinary, projectRoot } from '../../scripts/lib/temporal-binary.ts';
import { startDevServer, stopProcess, type DevServer } from '../../scripts/lib/temporal-server.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { GiveUp, pollUntil } from '../../test/support/poll.ts';
import { WORKER_NODE_FLAGS } from '../../worker/node-flags.ts';

export const BENCH_TOKEN = 'bench-admin-token-00000000000000000000';

export interface Stack {
  databaseUrl: string;
  apiUrl: string;
  temporalAddress: string;
  /** The current bulk worker process (a new one after restartWorker): workflows, exports, large batches. */
  worker: ChildProcess;
  /** The interactive worker process: small batches' applies. */
  interactiveWorker: ChildProcess;
  /** The current API process (a new one after restartApi). */
  api: ChildProcess;
  /** The current Temporal dev server process (a new one after startTemporal). */
  temporal: ChildProcess;
  env: NodeJS.ProcessEnv;
  /** DATA_DIR of the worker and the API: the Temporal database, the export files, the logs. */
  scratch: string;
  /** The export store's directory (DATA_DIR/exports). */
  exportDir: string;
  /** Children that exited without being asked to (a crash): one line each. */
  unexpectedExits: string[];
  /** Sends `signal` (default SIGKILL) to the worker and waits until it is gone (a SIGTERM is followed by SIGKILL after `graceMs`, default 10 s). */
  killWorker(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
  /** Starts a worker again (after killWorker), with the same environment (and `extraEnv`: a new release's bundle, say). */
  startWorker(extraEnv?: Record<string, string>): ChildProcess;
  /** Sends `signal` (default SIGKILL) to the interactive worker and waits until it is gone, as killWorker. */
  killInteractiveWorker(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
  /** Sends `signal` (default SIGKILL) to the API and waits until it is gone. */
  killApi(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the API again on the same port (with `extraEnv` over the stack's environment) and waits until /health answers. */
  startApi(extraEnv?: Record<string, string>): Promise<ChildProcess>;
  /** Stops the Temporal dev server (SIGTERM, SIGKILL after a grace period). */
  stopTemporal(): Promise<void>;
  /** Starts the dev server again on the same port and SQLite file; resolves once its frontend answers. */
  startTemporal(): Promise<void>;
  /** The last lines of the children's output (with childOutput: 'file'), for a failure report. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

export interface StackOptions {
  /**
   * Where the worker's and the API's output goes: 'inherit' (stderr to this
   * process, stdout dropped: the benchmarks) or 'file' (both into
   * worker.log / api.log in the scratch directory: fault tests, whose
   * children log expected errors).
   */
  childOutput?: 'inherit' | 'file';
  /**
   * Keep the database if it exists (create it when it does not) and only
   * apply pending migrations, instead of dropping and recreating it: the read
   * benchmarks run on a database loaded beforehand. Default false.
   */
  reuseDatabase?: boolean;
  /** The PostgreSQL server of the database (a URL of its `postgres` database); default BENCH_DATABASE_URL's. */
  databaseServer?: string;
}

/** The URL of database `name` on the bench server, dropped with its rows and created afresh. */
export async function recreateDatabase(name: string, server?: string): Promise<string> {
  const admin = new pg.Client({ connectionString: benchServerUrl(server).toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  await admin.end();
  return openDatabase(name, server);
}

/** The bench server's maintenance database (postgres), for questions about its databases. */
export function benchAdminUrl(): string {
  return benchServerUrl().toString();
}

function benchServerUrl(server?: string): URL {
  return new URL(withDatabaseUser(server ?? process.env.BENCH_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres'));
}

/** The URL of database `name` on the bench server, created when missing and migrated; existing rows are kept. */
export async function openDatabase(name: string, server?: string): Promise<string> {
  const base = benchServerUrl(server);
  base.pathname = `/${name}`;
  const url = base.toString();
  await ensureDatabase(url);
  const orm = await openOrm(url);
  await migrate(orm);
  await orm.close();
  return url;
}

/** A DROP DATABASE waits for every backend of the server to absorb a barrier; a bounded wait fails loudly instead of hanging. */
export async function dropDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), statement_timeout: 120_000 });
  await client.connect();
  try {
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
}

/** Peak resident set size of a live process in bytes (VmHWM). */
export function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

export async function startStack(databaseName: string, extraEnv: Record<string, string> = {}, options: StackOptions = {}): Promise<Stack> {
  const scratch = mkdtempSync(join(tmpdir(), 'entity-records-bench-'));
  const root = projectRoot();
  const temporalOptions = {
    binary: ensureTemporalBinary(),
    dbFile: join(scratch, 'temporal.db'),
    port: await freePort(),
    logFile: join(scratch, 'temporal.log'),
    // A drained worker deployment version is reported within seconds, not the server's minutes: the deploy scenario waits for it.
    dynamicConfig: ['matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"', 'matching.wv.VersionDrainageStatusRefreshInterval="2s"'],
  };
  const children: { worker?: ChildProcess; interactiveWorker?: ChildProcess; api?: ChildProcess; temporal?: DevServer } = {};
  const unexpectedExits: string[] = [];
  const expected = new WeakSet<ChildProcess>();
  let databaseUrl: string | undefined;

  const output = (name: string): ['ignore', 'ignore' | 'inherit' | number, 'ignore' | 'inherit' | number] => {
    if (options.childOutput !== 'file') return ['ignore', 'ignore', 'inherit'];
    const fd = openSync(join(scratch, `${name}.log`), 'a');
    writeSync(fd, `--- ${name} started ${new Date().toISOString()}\n`);
    return ['ignore', fd, fd];
  };
  const entries = { worker: 'worker/main.ts', interactiveWorker: 'worker/main.ts', api: 'api/main.ts' };
  const spawnChild = (name: keyof typeof entries, env: NodeJS.ProcessEnv): ChildProcess => {
    const stdio = output(name);
    const flags = name === 'api' ? [] : WORKER_NODE_FLAGS;
    const child = spawn(process.execPath, [...flags, resolve(root, entries[name])], { env, stdio });
    if (typeof stdio[1] === 'number') closeSync(stdio[1]);
    child.once('exit', (code, signal) => {
      if (!expected.has(child)) unexpectedExits.push(`${name} (pid ${child.pid}) exited unexpectedly: ${signal ?? `code ${code}`}`);
    });
    children[name] = child;
    return child;
  };
  const kill = async (child: ChildProcess | undefined, signal: NodeJS.Signals, graceMs?: number): Promise<void> => {
    if (!child) return;
    expected.add(child);
    if (signal === 'SIGTERM') return stopProcess(child, graceMs);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill(signal);
    await gone;
  };
  const stopAll = async () => {
    await kill(children.api, 'SIGTERM');
    await kill(children.worker, 'SIGTERM');
    await kill(children.interactiveWorker, 'SIGTERM');
    if (children.temporal) {
      expected.add(children.temporal.process);
      await children.temporal.stop();
    }
    rmSync(scratch, { recursive: true, force: true });
  };

  try {
    const [url, temporal] = await Promise.all([
      options.reuseDatabase ? openDatabase(databaseName, options.databaseServer) : recreateDatabase(databaseName, options.databaseServer),
      startDevServer(temporalOptions),
    ]);
    databaseUrl = url;
    children.temporal = temporal;
    const port = await freePort();
    const workflowBundle = join(scratch, 'workflow-bundle.js');
    execFileSync(process.execPath, [resolve(root, 'scripts/bundle-workflows.ts'), workflowBundle], { stdio: 'inherit' });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench',
      DATA_DIR: scratch,
      LOG_LEVEL: 'warn',
      WORKFLOW_BUNDLE: workflowBundle,
      PORT: String(port),
      AUTH_TOKENS: JSON.stringify([{ token: BENCH_TOKEN, name: 'bench', permissions: ['admin'] }]),
      // Benchmarks and the load scenario submit as fast as they can under one token: they measure throughput, not the limit.
      SUBMISSION_RATE_LIMIT: '0',
      EXPORT_RATE_LIMIT: '0',
      // The export benchmarks write the whole registry again and again under the one token.
      EXPORT_DISK_BYTES_PER_PRINCIPAL: '0',
      // Many clients' uploads and reads, all under the one bench token (the uploads benchmark, the API-kill and load scenarios).
      UPLOADS_PER_PRINCIPAL: '0',
      LONG_READS_PER_PRINCIPAL: '0',
      // The fault and contract suites send bad credentials on purpose, all from loopback.
      AUTH_FAILURE_LIMIT: '0',
      // One API process (its pid is the one that serves, for RSS figures and kills); bench:reads sets more where it compares them.
      API_PROCESSES: '1',
      ...extraEnv,
    };
    const apiUrl = `http://127.0.0.1:${port}`;
    const startApi = async (extraEnv: Record<string, string> = {}): Promise<ChildProcess> => {
      const api = spawnChild('api', { ...env, ...extraEnv });
      await waitForHealth(apiUrl, api);
      return api;
    };
    const bulkEnv = { ...env, WORKER_LANES: 'bulk' };
    spawnChild('worker', bulkEnv);
    spawnChild('interactiveWorker', { ...env, WORKER_LANES: 'interactive' });
    await startApi();

    return {
      databaseUrl,
      apiUrl,
      temporalAddress: temporal.address,
      get worker() {
        return children.worker!;
      },
      get interactiveWorker() {
        return children.interactiveWorker!;
      },
      get api() {
        return children.api!;
      },
      get temporal() {
        return children.temporal!.process;
      },
      env,
      scratch,
      exportDir: join(scratch, 'exports'),
      unexpectedExits,
      killWorker: (signal = 'SIGKILL', graceMs?: number) => kill(children.worker, signal, graceMs),
      startWorker: (extraEnv: Record<string, string> = {}) => spawnChild('worker', { ...bulkEnv, ...extraEnv }),
      killInteractiveWorker: (signal = 'SIGKILL', graceMs?: number) => kill(children.interactiveWorker, signal, graceMs),
      killApi: (signal = 'SIGKILL') => kill(children.api, signal),
      startApi,
      async stopTemporal() {
        if (!children.temporal) return;
        expected.add(children.temporal.process);
        await children.temporal.stop();
      },
      async startTemporal() {
        children.temporal = await startDevServer(temporalOptions);
      },
      logTail: (lines = 40) => logTail(scratch, lines),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll().catch(() => undefined);
    if (databaseUrl && !options.reuseDatabase) await dropDatabase(databaseUrl).catch(() => undefined);
    throw error;
  }
}

/** Waits until GET /health answers 200; fails at once when the process exits first. */
async function waitForHealth(apiUrl: string, api: ChildProcess, timeoutMs = 60_000): Promise<void> {
  await pollUntil(
    async () => {
      if (api.exitCode !== null || api.signalCode !== null)
        throw new GiveUp(`API exited during start-up (${api.signalCode ?? `code ${api.exitCode}`})`);
      // An error here is "not listening yet", retried.
      return (await fetch(`${apiUrl}/health`, { signal: AbortSignal.timeout(5000) })).ok ? true : undefined;
    },
    { timeoutMs, intervalMs: 200, what: 'the API to become healthy' },
  );
}

function logTail(scratch: string, lines: number): string {
  const tails: string[] = [];
  for (const name of ['worker', 'interactiveWorker', 'api', 'temporal']) {
    let text: string;
    try {
      text = readFileSync(join(scratch, `${name}.log`), 'utf8');
    } catch {
      continue;
    }
    tails.push(`==> ${name}.log <==\n${text.split('\n').slice(-lines).join('\n')}`);
  }
  return tails.join('\n');
}
