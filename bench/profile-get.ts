// node bench/profile-get.ts [-- --entities 100000 --duration 10 --ids 2000 --api-processes 1 --out DIR --api-root DIR --database NAME --socket DIR --through-koa]
//
// A CPU profile of the API under GET /api/v2/entities/{id} at c=32: the
// reads database of bench:reads (reused or loaded), a headless Temporal dev
// server, the API as npm start runs it (LOG_LEVEL info) with `--cpu-prof`
// (every API process of the cluster writes its own profile), a 2 s warm-up,
// then --duration seconds with a bearer token and as many HMAC-signed.
// Prints the busy time of the measured window (warm-ups and start-up left
// out) by area and the functions with the most self time, and per request
// the CPU time of the API's processes and of the PostgreSQL backends serving
// it (from /proc: a loaded machine skews them far less than rates). --api-root runs
// the api/main.ts of another checkout (an older commit, for a before/after).
// --database reads an existing database of the bench server instead (a copy
// of a reads database changed by hand, for a prototype; migrated, not loaded).
// --socket DIR: the API connects to PostgreSQL over its unix socket in DIR
// (/var/run/postgresql) instead of the URL's TCP address.
// --through-koa: GET entity goes through Koa's middleware chain and router
// like every request (API_DIRECT_ENTITY_GET=false) instead of being answered
// before it; run it beside a run without, alternating, to see what the chain
// costs per GET.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from '../scripts/lib/ports.ts';
import { ensureTemporalBinary } from '../scripts/lib/temporal-binary.ts';
import { startDevServer, stopProcess } from '../scripts/lib/temporal-server.ts';
import { commandOptions, isScript, loadAverage } from './lib/cli.ts';
import { BENCH_TOKEN, openDatabase } from './lib/stack.ts';
import { idSpread, READS_ENV, readsDatabase, runLean, spreadIds } from './reads.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The area a function belongs to, from its script's URL. */
function areaOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(program)') return 'native / event loop (program)';
    return `native: ${functionName || '(anonymous)'}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) {
    if (pkg === 'pg' || pkg.startsWith('pg-')) return 'pg driver';
    if (
      pkg === 'koa' ||
      pkg.startsWith('koa-') ||
      pkg.startsWith('@koa/') ||
      [
        'path-to-regexp',
        'http-errors',
        'statuses',
        'on-finished',
        'content-type',
        'mime-types',
        'type-is',
        'cookies',
        'vary',
        'accepts',
        'delegates',
        'only',
        'fresh',
        'encodeurl',
        'escape-html',
        'destroy',
        'ee-first',
        'content-disposition',
        'media-typer',
        'negotiator',
      ].includes(pkg)
    )
      return 'koa, router and their helpers';
    if (
      pkg === 'pino' ||
      pkg.startsWith('pino-') ||
      pkg === 'sonic-boom' ||
      pkg === 'thread-stream' ||
      pkg === 'fast-redact' ||
      pkg === 'quick-format-unescaped'
    )
      return 'logging (pino)';
    if (pkg === 'prom-client' || pkg === 'tdigest' || pkg === 'bintrees') return 'metrics (prom-client)';
    return `package ${pkg}`;
  }
  if (url.includes('/domain/xml/')) return 'XML serialisation (domain/xml)';
  if (url.includes('/api/auth/') || url.includes('/api/middleware/auth')) return 'authentication (api/auth)';
  if (url.startsWith('file://') && url.includes(ROOT))
    return `service code (${url
      .slice(url.indexOf(ROOT) + ROOT.length + 1)
      .split('/')
      .slice(0, 2)
      .join('/')})`;
  if (/node:(internal\/)?(_)?http|_http_|internal\/http/.test(url) || url.includes('http_parser')) return 'node http';
  if (/node:(internal\/)?(net|stream|streams|tty)|internal\/streams|internal\/stream_base/.test(url)) return 'node net and streams';
  if (/node:(internal\/)?(crypto)/.test(url)) return 'node crypto';
  if (/node:internal\/(process\/task_queues|timers|async_hooks)|node:timers|node:events|node:internal\/event_target/.test(url))
    return 'node timers, ticks and events';
  if (/node:diagnostics_channel|internal\/dc/.test(url)) return 'node diagnostics_channel';
  if (url.startsWith('node:')) return `node other (${url.slice(5).split('/').slice(0, 2).join('/')})`;
  return url;
}

/** Self time of each node in [from, to] (µs, the profile's own clock). */
function selfTimes(profile: CpuProfile, from: number, to: number): Map<number, number> {
  const times = new Map<number, number>();
  let at = profile.startTime;
  for (let index = 0; index < profile.samples.length; index += 1) {
    const delta = profile.timeDeltas[index]!;
    at += delta;
    if (at < from || at > to) continue;
    const node = profile.samples[index]!;
    times.set(node, (times.get(node) ?? 0) + delta);
  }
  return times;
}

function summarize(files: string[], from: number, to: number): string {
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    for (const [id, micros] of selfTimes(profile, from, to)) {
      const frame = nodes.get(id)!.callFrame;
      if (frame.functionName === '(idle)') {
        idle += micros;
        continue;
      }
      busy += micros;
      const area = areaOf(frame);
      byArea.set(area, (byArea.get(area) ?? 0) + micros);
      const where = frame.url
        ? `${frame.url.replace(/^file:\/\/.*?node_modules\//, '').replace(`file://${ROOT}/`, '')}:${frame.lineNumber + 1}`
        : '';
      const name = `${frame.functionName || '(anonymous)'} ${where}`.trim();
      byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    }
  }
  const share = (micros: number) => `${((100 * micros) / busy).toFixed(1).padStart(5)}%`;
  const lines = [
    `busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s (${files.length} profile${files.length === 1 ? '' : 's'})`,
    '',
    'by area:',
  ];
  for (const [area, micros] of [...byArea].sort((a, b) => b[1] - a[1])) lines.push(`${share(micros)}  ${area}`);
  lines.push('', 'top self time:');
  for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30)) lines.push(`${share(micros)}  ${name}`);
  return lines.join('\n');
}

/** CPU seconds (user, system) the API process and its children (a cluster's processes) have used so far. */
function cpuSeconds(pid: number): { user: number; system: number } {
  const pids = [pid];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    pids.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
  }
  return processesCpu(pids);
}

function processesCpu(pids: readonly number[]): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const one of pids) {
    // Fields 14 and 15 (utime, stime), counted after the parenthesised command name.
    const fields = readFileSync(`/proc/${one}/stat`, 'utf8').split(') ')[1]!.split(' ');
    user += Number(fields[11]);
    system += Number(fields[12]);
  }
  return { user: user / 100, system: system / 100 };
}

/**
 * CPU seconds the PostgreSQL backends serving the API have used so far: the
 * client backends connected to the database, other than this query's (the
 * API's pool keeps its connections through the runs). Needs the server on
 * this machine.
 */
async function backendsCpu(url: string): Promise<{ user: number; system: number; transactions: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
    );
    // Each statement of reads is a transaction of its own: their count tells how many GETs a statement carried.
    const [stats] = (
      await client.query<{ transactions: string }>(
        `select xact_commit + xact_rollback as transactions from pg_stat_database where datname = current_database()`,
      )
    ).rows;
    return {
      ...processesCpu(rows.map((row) => row.pid).filter((pid) => existsSync(`/proc/${pid}/stat`))),
      transactions: Number(stats!.transactions),
    };
  } finally {
    await client.end();
  }
}

/** The URL with its host replaced by the unix socket directory `dir` (pg's `host` parameter). */
function overSocket(url: string, dir: string): string {
  const over = new URL(url);
  over.searchParams.set('host', dir);
  return over.toString();
}

/** CLOCK_MONOTONIC in µs: the clock V8's profiler stamps its samples with. */
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

if (isScript(import.meta)) {
  const values = commandOptions(
    { entities: '100000', duration: '10', ids: '2000', 'api-processes': '1', 'api-root': ROOT },
    { optional: ['out', 'database', 'socket'], flags: ['through-koa'] },
  );
  const seconds = Number(values.duration);
  const database =
    values.database === undefined
      ? await readsDatabase(Number(values.entities))
      : { url: await openDatabase(values.database), how: `database ${values.database} as it is` };
  process.stderr.write(`profile: ${database.how}\n`);
  const scratch = mkdtempSync(join(tmpdir(), 'entity-records-profile-'));
  const out = resolve(values.out ?? join(scratch, 'profiles'));
  mkdirSync(out, { recursive: true });
  const temporal = await startDevServer({
    binary: ensureTemporalBinary(),
    dbFile: join(scratch, 'temporal.db'),
    port: await freePort(),
    logFile: join(scratch, 'temporal.log'),
  });
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const api = spawn(process.execPath, [join(resolve(values['api-root']), 'api/main.ts')], {
    env: {
      ...process.env,
      ...READS_ENV,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${out}`.trim(),
      DATABASE_URL: values.socket === undefined ? database.url : overSocket(database.url, values.socket),
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: 'bench-profile',
      DATA_DIR: scratch,
      PORT: String(port),
      API_PROCESSES: values['api-processes'],
      API_DIRECT_ENTITY_GET: values['through-koa'] ? 'false' : 'true',
      AUTH_TOKENS: JSON.stringify([{ token: BENCH_TOKEN, name: 'bench', permissions: ['admin'] }]),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (let ready = false; !ready;) {
      if (api.exitCode !== null) throw new Error(`the API exited during start-up (code ${api.exitCode})`);
      ready = await fetch(`${apiUrl}/health`).then(
        (answer) => answer.ok,
        () => false,
      );
      if (!ready) await new Promise((done) => setTimeout(done, 200));
    }
    const paths = spreadIds(await idSpread(database.url, Number(values.ids))).map((id) => `/api/v2/entities/${id}`);
    await runLean(apiUrl, paths, 2);
    await runLean(apiUrl, paths, 2, 'hmac');
    const from = monotonicMicros();
    const cpuBefore = cpuSeconds(api.pid!);
    const pgBefore = await backendsCpu(database.url);
    const bearer = await runLean(apiUrl, paths, seconds);
    const cpuBetween = cpuSeconds(api.pid!);
    const pgBetween = await backendsCpu(database.url);
    const hmac = await runLean(apiUrl, paths, seconds, 'hmac');
    const cpuAfter = cpuSeconds(api.pid!);
    const pgAfter = await backendsCpu(database.url);
    const to = monotonicMicros();
    await stopProcess(api);
    const files = readdirSync(out)
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => join(out, name));
    // CPU time per request does not depend on how much of the machine others take, as rates and latencies do.
    type Cpu = ReturnType<typeof cpuSeconds>;
    const perRequest = (from: Cpu, to: Cpu, r: typeof bearer) => {
      const micros = (cpu: number) => ((cpu * 1e6) / (r.requestsPerSecond * seconds)).toFixed(0);
      return `${micros(to.user + to.system - from.user - from.system)} µs CPU per request (user ${micros(to.user - from.user)}, system ${micros(to.system - from.system)})`;
    };
    const pgPerRequest = (from: Cpu & { transactions: number }, to: Cpu & { transactions: number }, r: typeof bearer) =>
      `PostgreSQL ${(((to.user + to.system - from.user - from.system) * 1e6) / (r.requestsPerSecond * seconds)).toFixed(0)} µs (${((r.requestsPerSecond * seconds) / Math.max(1, to.transactions - from.transactions)).toFixed(1)} GETs a statement)`;
    const rate = (
      name: string,
      r: typeof bearer,
      from: Cpu,
      to: Cpu,
      pgFrom: Cpu & { transactions: number },
      pgTo: Cpu & { transactions: number },
    ) =>
      `${name} ${r.requestsPerSecond.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${perRequest(from, to, r)}, ${pgPerRequest(pgFrom, pgTo, r)}, load generator ${r.clientCpuMicros.toFixed(0)} µs, ${r.errors} errors`;
    process.stdout.write(
      `${rate('bearer', bearer, cpuBefore, cpuBetween, pgBefore, pgBetween)}; ${rate('HMAC', hmac, cpuBetween, cpuAfter, pgBetween, pgAfter)}; ${values.socket === undefined ? 'TCP' : `unix socket ${values.socket}`}; API_PROCESSES=${values['api-processes']}; ${values['through-koa'] ? 'GET through the Koa chain' : 'GET before the Koa chain'}; load average ${loadAverage()}\n`,
    );
    process.stdout.write(`${summarize(files, from, to)}\nprofiles in ${out}\n`);
  } finally {
    await stopProcess(api);
    await temporal.stop();
    rmSync(join(scratch, 'temporal.db'), { force: true });
  }
}
