// A whole service for benchmarks: a Temporal dev server and a scratch
// PostgreSQL database of its own, with the worker and the API as child
// processes (so their memory can be measured apart from the driver).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { ensureDatabase, migrate, openOrm } from '../../db/orm.ts';
import { ensureTemporalBinary, projectRoot } from '../../scripts/lib/temporal-binary.ts';
import { startDevServer, stopProcess, type DevServer } from '../../scripts/lib/temporal-server.ts';
import { freePort } from '../../scripts/lib/ports.ts';

export const BENCH_TOKEN = 'bench-admin-token-000000000000';

export interface Stack {
  databaseUrl: string;
  apiUrl: string;
  temporalAddress: string;
  worker: ChildProcess;
  api: ChildProcess;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export async function recreateDatabase(name: string): Promise<string> {
  const base = new URL(withDatabaseUser(process.env.BENCH_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres'));
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  await admin.end();
  base.pathname = `/${name}`;
  const url = base.toString();
  await ensureDatabase(url);
  const orm = await openOrm(url);
  await migrate(orm);
  await orm.close();
  return url;
}

export async function dropDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  await client.end();
}

/** Peak resident set size of a live process in bytes (VmHWM). */
export function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

export async function startStack(databaseName: string, extraEnv: Record<string, string> = {}): Promise<Stack> {
  const scratch = mkdtempSync(join(tmpdir(), 'entity-records-bench-'));
  const [databaseUrl, temporal] = await Promise.all([
    recreateDatabase(databaseName),
    (async (): Promise<DevServer> =>
      startDevServer({ binary: ensureTemporalBinary(), dbFile: join(scratch, 'temporal.db'), port: await freePort(), logFile: join(scratch, 'temporal.log') }))(),
  ]);
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'bench',
    DATA_DIR: scratch,
    LOG_LEVEL: 'warn',
    PORT: String(port),
    AUTH_TOKENS: JSON.stringify([{ token: BENCH_TOKEN, name: 'bench', permissions: ['admin'] }]),
    ...extraEnv,
  };
  const root = projectRoot();
  const worker = spawn(process.execPath, [resolve(root, 'worker/main.ts')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const api = spawn(process.execPath, [resolve(root, 'api/main.ts')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const apiUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${apiUrl}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('API did not become healthy within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    databaseUrl,
    apiUrl,
    temporalAddress: temporal.address,
    worker,
    api,
    env,
    async stop() {
      await stopProcess(api);
      await stopProcess(worker);
      await temporal.stop();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
