import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Connection } from '@temporalio/client';

export interface DevServerOptions {
  binary: string;
  dbFile: string;
  port: number;
  uiPort?: number;
  logFile: string;
  namespace?: string;
  /** More `--dynamic-config-value KEY=VALUE` settings of the server. */
  dynamicConfig?: readonly string[];
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

/** Starts `temporal server start-dev` persisted to one SQLite file and waits until its frontend answers. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  mkdirSync(dirname(options.dbFile), { recursive: true });
  mkdirSync(dirname(options.logFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    options.dbFile,
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--log-level',
    'warn',
    // No network here: the version check would only time out.
    '--dynamic-config-value',
    'frontend.enableServerVersionCheck=false',
    ...(options.dynamicConfig ?? []).flatMap((value) => ['--dynamic-config-value', value]),
    ...(options.uiPort ? ['--ui-port', String(options.uiPort), '--ui-disable-news-fetch'] : ['--headless']),
    ...(options.namespace && options.namespace !== 'default' ? ['--namespace', options.namespace] : []),
  ];
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(options.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) =>
      reject(new Error(`temporal dev server exited during start-up (${signal ?? `code ${code}`}); see ${options.logFile}`)),
    );
  });
  const address = `127.0.0.1:${options.port}`;
  try {
    await Promise.race([waitForFrontend(address), exited]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  exited.catch(() => undefined);
  return {
    address,
    uiUrl: options.uiPort ? `http://127.0.0.1:${options.uiPort}` : undefined,
    process: child,
    stop: () => stopProcess(child),
  };
}

async function waitForFrontend(address: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.withDeadline(Date.now() + 2000, () => connection.workflowService.getSystemInfo({}));
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`temporal dev server at ${address} did not answer within ${START_TIMEOUT_MS / 1000} s: ${String(error)}`, {
          cause: error,
        });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}
