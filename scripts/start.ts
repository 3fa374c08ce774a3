// `npm start`: the whole service on its embedded defaults. Starts (when not
// configured elsewhere) a Temporal dev server persisted under DATA_DIR,
// prepares the PostgreSQL database, then runs the worker (one process per
// lane: bulk, interactive) and the API as child processes. Ctrl-C stops them
// in reverse order.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, ConfigError, type Config } from '../config.ts';
import { ensureDatabase, migrate, openOrm } from '../db/orm.ts';
import { WORKER_NODE_FLAGS } from '../worker/node-flags.ts';
import { portIsFree } from './lib/ports.ts';
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

  // Said up front and by name: otherwise a server that cannot bind dies with a message deep in its own log.
  const ports = [
    { port: config.PORT, host: config.HOST, name: 'PORT (the API)' },
    ...(config.TEMPORAL_ADDRESS ? [] : [
      { port: config.TEMPORAL_PORT, host: '127.0.0.1', name: 'TEMPORAL_PORT (the Temporal dev server)' },
      { port: config.TEMPORAL_UI_PORT, host: '127.0.0.1', name: 'TEMPORAL_UI_PORT (its Web UI)' },
    ]),
  ];
  for (const { port, host, name } of ports) {
    if (!(await portIsFree(port, host))) {
      say(`port ${port} on ${host} is in use (another npm start?): stop that, or set ${name} to another port.`);
      process.exit(1);
    }
  }

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
  const env = { ...process.env, TEMPORAL_ADDRESS: temporalAddress, WORKFLOW_BUNDLE: workflowBundle };
  for (const { entry, name, extraEnv, flags } of [...workerProcesses(config), { entry: 'api/main.ts', name: 'api', extraEnv: {}, flags: [] }]) {
    const child = spawn(process.execPath, [...flags, resolve(projectRoot(), entry)], { env: { ...env, ...extraEnv }, stdio: 'inherit' });
    child.once('exit', (code, signal) => {
      if (!stopping) {
        say(`${name} exited (${signal ?? `code ${code}`}); stopping the rest`);
        void stopAll(1);
      }
    });
    children.push(child);
  }
  say(`API at http://${config.HOST}:${config.PORT} (${config.API_PROCESSES === 1 ? 'one process' : `${config.API_PROCESSES} processes, API_PROCESSES`}; health: /health). Ctrl-C stops everything.`);
}

/**
 * One worker process per lane unless WORKER_LANES says otherwise: a small
 * batch's apply then runs on an event loop of its own, never behind the
 * parsing of an import in the bulk process (docs/performance.md, issue 26).
 * With WORKER_METRICS_PORT set, the interactive process serves its metrics on
 * the next port.
 */
function workerProcesses(config: Config): { entry: string; name: string; extraEnv: Record<string, string>; flags: readonly string[] }[] {
  if (process.env.WORKER_LANES) return [{ entry: 'worker/main.ts', name: `worker (${config.WORKER_LANES.join(', ')})`, extraEnv: {}, flags: WORKER_NODE_FLAGS }];
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
