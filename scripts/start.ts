// `npm start`: the whole service on its embedded defaults. Starts (when not
// configured elsewhere) a Temporal dev server persisted under DATA_DIR,
// prepares the PostgreSQL database, then runs the worker (one process per
// lane: bulk, interactive) and the API as child processes. Ctrl-C (or the end
// of the process that ran it, such as npm) stops them in reverse order.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, ConfigError, type Config } from '../config.ts';
import { ensureDatabase, migrate, openOrm } from '../db/orm.ts';
import { FAILED_JOBS_QUERY, workflowListUiUrl } from '../temporal/client/job-workflow.ts';
import { WORKER_NODE_FLAGS } from '../worker/node-flags.ts';
import { portProblems, type WantedPort } from './lib/ports.ts';
import { ensureTemporalBinary, projectRoot } from './lib/temporal-binary.ts';
import { startDevServer, stopProcess, type DevServer } from './lib/temporal-server.ts';

function say(line: string): void {
  process.stdout.write(`[start] ${line}\n`);
}

async function main(): Promise<void> {
  const config = loadConfig();
  const dataDir = resolve(projectRoot(), config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const children: ChildProcess[] = [];
  let temporalServer: DevServer | undefined;
  let stopping = false;

  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    for (const child of children.reverse()) await stopProcess(child);
    if (temporalServer) await temporalServer.stop();
    say('stopped');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  // Said up front, all at once and by name: otherwise a server that cannot bind dies with a message deep in its own log.
  const problems = await portProblems(wantedPorts(config));
  if (problems.length > 0) {
    for (const problem of problems) say(problem);
    process.exit(1);
  }
  followParent(() => void stopAll(0));

  let temporalAddress = config.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    const binary = ensureTemporalBinary();
    temporalServer = await startDevServer({
      binary,
      dbFile: resolve(dataDir, 'temporal.db'),
      port: config.TEMPORAL_PORT,
      uiPort: config.TEMPORAL_UI_PORT,
      logFile: resolve(dataDir, 'temporal.log'),
      namespace: config.TEMPORAL_NAMESPACE,
    });
    temporalAddress = temporalServer.address;
    say(`Temporal dev server at ${temporalAddress}; Web UI at ${temporalServer.uiUrl}`);
    if (temporalServer.uiUrl)
      say(`jobs that did not succeed: ${workflowListUiUrl(temporalServer.uiUrl, config.TEMPORAL_NAMESPACE, FAILED_JOBS_QUERY)}`);
  } else {
    say(`using Temporal at ${temporalAddress}`);
  }

  try {
    await ensureDatabase(config.DATABASE_URL);
  } catch (error) {
    say(`PostgreSQL does not answer at ${redact(config.DATABASE_URL)}: ${(error as Error).message}. Start it, or set DATABASE_URL.`);
    await stopAll(1);
    return;
  }
  const orm = await openOrm(config.DATABASE_URL);
  await migrate(orm);
  await orm.close();
  say(`database ready at ${redact(config.DATABASE_URL)} (migrations applied)`);

  const workflowBundle = resolve(dataDir, 'workflow-bundle.js');
  execFileSync(process.execPath, [resolve(projectRoot(), 'scripts/bundle-workflows.ts'), workflowBundle], { stdio: 'inherit' });
  // Its workers are every worker of this release, and no other release's run: its version becomes current at each start.
  const env = { WORKER_VERSION_CURRENT: 'always', ...process.env, TEMPORAL_ADDRESS: temporalAddress, WORKFLOW_BUNDLE: workflowBundle };
  for (const { entry, name, extraEnv, flags } of [
    ...workerProcesses(config),
    { entry: 'api/main.ts', name: 'api', extraEnv: {}, flags: [] },
  ]) {
    const child = spawn(process.execPath, [...flags, resolve(projectRoot(), entry)], { env: { ...env, ...extraEnv }, stdio: 'inherit' });
    child.once('exit', (code, signal) => {
      if (!stopping) {
        say(`${name} exited (${signal ?? `code ${code}`}); stopping the rest`);
        void stopAll(1);
      }
    });
    children.push(child);
  }
  say(
    `API at http://${config.HOST}:${config.PORT} (${config.API_PROCESSES === 1 ? 'one process' : `${config.API_PROCESSES} processes, API_PROCESSES`}; health: /health). Ctrl-C stops everything.`,
  );
}

/** Every port npm start's own processes bind, with the variable that moves it. */
function wantedPorts(config: Config): WantedPort[] {
  const ports: WantedPort[] = [{ port: config.PORT, host: config.HOST, what: 'the API', variable: 'PORT' }];
  if (!config.TEMPORAL_ADDRESS) {
    // Its HTTP API and metrics take free ports of their own choosing.
    ports.push({ port: config.TEMPORAL_PORT, host: '127.0.0.1', what: 'the Temporal dev server', variable: 'TEMPORAL_PORT' });
    ports.push({ port: config.TEMPORAL_UI_PORT, host: '127.0.0.1', what: 'its Web UI', variable: 'TEMPORAL_UI_PORT' });
  }
  const metricsPort = config.WORKER_METRICS_PORT;
  if (metricsPort !== undefined) {
    ports.push({ port: metricsPort, host: config.HOST, what: 'the worker metrics', variable: 'WORKER_METRICS_PORT' });
    if (!process.env.WORKER_LANES)
      ports.push({
        port: metricsPort + 1,
        host: config.HOST,
        what: "the interactive worker's metrics, WORKER_METRICS_PORT + 1",
        variable: 'WORKER_METRICS_PORT',
      });
  }
  return ports;
}

/** How often the start script looks whether the process that ran it is still there. */
const PARENT_CHECK_MS = 1_000;

/**
 * Stops everything when the process that ran this script goes away: `kill`
 * of npm alone ends npm (and its shell) without a signal to this script,
 * which is then handed to another parent (init). Ctrl-C reaches the whole
 * process group and needs none of this.
 */
function followParent(stop: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    say(`the process that started this one (${parent}) has ended`);
    stop();
  }, PARENT_CHECK_MS);
  timer.unref();
}

/**
 * One worker process per lane unless WORKER_LANES says otherwise: a small
 * batch's apply then runs on an event loop of its own, never behind the
 * parsing of an import in the bulk process (docs/performance.md, issue 26).
 * With WORKER_METRICS_PORT set, the interactive process serves its metrics on
 * the next port.
 */
function workerProcesses(config: Config): { entry: string; name: string; extraEnv: Record<string, string>; flags: readonly string[] }[] {
  if (process.env.WORKER_LANES)
    return [{ entry: 'worker/main.ts', name: `worker (${config.WORKER_LANES.join(', ')})`, extraEnv: {}, flags: WORKER_NODE_FLAGS }];
  const metricsPort = config.WORKER_METRICS_PORT;
  return [
    { entry: 'worker/main.ts', name: 'worker (bulk)', extraEnv: { WORKER_LANES: 'bulk' }, flags: WORKER_NODE_FLAGS },
    {
      entry: 'worker/main.ts',
      name: 'worker (interactive)',
      extraEnv: { WORKER_LANES: 'interactive', ...(metricsPort === undefined ? {} : { WORKER_METRICS_PORT: String(metricsPort + 1) }) },
      flags: WORKER_NODE_FLAGS,
    },
  ];
}

function redact(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (url.password) url.password = '***';
  return url.toString();
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : String((error as Error).stack ?? error);
  process.stderr.write(`[start] ${message}\n`);
  process.exit(1);
});
