// PostgreSQL clusters of a test's own: a primary (wal_level replica, a
// replication entry in pg_hba.conf) and streaming hot standbys of it made by
// pg_basebackup -R, each on a free port. The run's shared PostgreSQL is not
// copied: its cluster holds every database of the machine, and it need not
// accept replication connections. As root, the clusters run as the postgres
// OS user (PostgreSQL refuses to run as root).
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../platform/ports.ts';

const run = promisify(execFile);
const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const OS_USER = 'postgres';

/** Why standbys cannot be made here; undefined when they can. */
export function standbysUnavailable(): string | undefined {
  for (const tool of ['initdb', 'pg_ctl', 'pg_basebackup']) {
    if (!existsSync(join(BIN, tool))) return `no ${tool} in ${BIN} (set PG_BIN_DIR)`;
  }
  return undefined;
}

export interface Cluster {
  readonly port: number;
  readonly dataDir: string;
  /** A URL of the named database on this cluster. */
  url(database?: string): string;
  /** Stops it: 'immediate' is a crash (no shutdown checkpoint), as a killed machine. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** SIGKILL to its postmaster: a machine gone, no shutdown at all (its backends end once they see it gone). */
  kill(): void;
  /** Starts it again after stop() or kill(). */
  start(): Promise<void>;
  /** Rows of a query on one of its databases. */
  sql<T extends pg.QueryResultRow>(database: string, query: string, params?: unknown[]): Promise<T[]>;
  /** Stops it (when running) and removes its directory. */
  remove(): Promise<void>;
}

async function asOsUser(command: string, args: string[]): Promise<string> {
  const root = process.getuid?.() === 0;
  const { stdout } = await run(root ? 'runuser' : join(BIN, command), root ? ['-u', OS_USER, '--', join(BIN, command), ...args] : args, {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (process.getuid?.() === 0) {
    const { uid, gid } = osUser();
    chownSync(dir, uid, gid);
  }
  return dir;
}

function osUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry: string) => entry.startsWith(`${OS_USER}:`));
  if (!line) throw new Error(`no ${OS_USER} OS user to run PostgreSQL as`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function cluster(dataDir: string, port: number, options: string[]): Cluster {
  const serverOptions = ['-c', `port=${port}`, '-c', 'listen_addresses=127.0.0.1', '-c', "unix_socket_directories=''", ...options].join(
    ' ',
  );
  let running = true;
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const self: Cluster = {
    port,
    dataDir,
    url,
    async stop(mode = 'fast') {
      if (!running) return;
      await asOsUser('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']);
      running = false;
    },
    kill() {
      const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      running = false;
    },
    async start() {
      await asOsUser('pg_ctl', ['-D', dataDir, '-o', serverOptions, '-l', join(dataDir, 'server.log'), '-w', 'start']);
      running = true;
    },
    async sql<T extends pg.QueryResultRow>(database: string, query: string, params: unknown[] = []) {
      const client = new pg.Client({ connectionString: url(database) });
      await client.connect();
      try {
        return (await client.query<T>(query, params)).rows;
      } finally {
        await client.end();
      }
    },
    async remove() {
      await self.stop('immediate').catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return self;
}

/** A primary of the test's own: small, fsync off (a crash loses nothing a test keeps), replication allowed from 127.0.0.1. */
export async function startPrimary(): Promise<Cluster> {
  const dataDir = scratchDir('er-primary-');
  // initdb's pg_hba.conf under --auth=trust allows replication connections from 127.0.0.1.
  await asOsUser('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
  const primary = cluster(dataDir, await freePort(), [
    '-c wal_level=replica',
    '-c max_wal_senders=10',
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c autovacuum=off',
  ]);
  await primary.start();
  return primary;
}

export interface StandbyOptions {
  /** recovery_min_apply_delay: a standby that applies each commit this long after the primary made it. */
  applyDelay?: string;
  /** The port to listen on (one a harness was already given); default: a free one. */
  port?: number;
}

/** A streaming hot standby of `primary`, copied by pg_basebackup -R (the connection to the primary written for it). */
export async function startStandby(primary: Cluster, options: StandbyOptions = {}): Promise<Cluster> {
  const dataDir = scratchDir('er-standby-');
  await asOsUser('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    dataDir,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
  ]);
  const standby = cluster(dataDir, options.port ?? (await freePort()), [
    '-c hot_standby=on',
    // Replay waits for the standby's reads instead of cancelling them (docs/decisions/0192).
    '-c hot_standby_feedback=on',
    '-c fsync=off',
    ...(options.applyDelay ? [`-c recovery_min_apply_delay=${options.applyDelay}`] : []),
  ]);
  await standby.start();
  return standby;
}
