// npm run bench:reads [-- --entities 1000000 --runs 3 --duration 10 --ids 5000 --searches 200 --api-processes 1,2 --reload --json FILE]
//
// Reads on a database of N generated entities (default 1,000,000), against
// the API as a child process (bench/lib/stack.ts):
//  - GET /api/v2/entities/{id}: throughput and latency p50/p99 at 32
//    concurrent connections for --duration seconds, over --ids ids spread
//    over the table, from a lean load generator (bench/lib/http-load.ts; the
//    same requests from autocannon are shown beside), with a bearer token and signed with an HMAC
//    API key (as the real client signs); the baseline is PostgreSQL's own
//    rate for the statement the route runs (`pgbench -n -M prepared -c 32
//    -j 2 -T <duration>` over the same ids: the stored document; the record's
//    statement, the baseline before documents were stored, is shown beside
//    it), and a bare Koa app (another child
//    process) answering the same paths with the same bytes is shown beside it.
//    The API runs as `npm start` runs it: LOG_LEVEL info (a line per
//    request), metrics; the GET runs are made once per API_PROCESSES count of
//    --api-processes (default 1 and 2, side by side; the targets go with
//    npm start's count, one per core); updates and search run on one process;
//  - POST /api/v2/search: p50/p95 over 200 (--searches) sequential requests each of an
//    index condition `name` CT_CONTAIN, of types + state filters, of user
//    filters (userRoles SENDER with the userUuid of one of the loader's ten
//    senders, or of nobody), and of a broad `part` condition (PT_NAME alone,
//    every record; answered, or refused as too broad with a 400);
//  - GET /api/v2/updates: one page of 50,000 (time to last byte), with the
//    API's RSS before/after (VmRSS) and its peak (VmHWM).
// Each is measured --runs times (median; the note gives the spread).
// --parts updates,get,search runs only those parts (default all three).
//
// The database (er_bench_reads for 1,000,000 entities, er_bench_reads_N for
// other sizes) is loaded by bench/lib/load.ts: the service's own write path,
// one 10,000-entity batch per transaction. It is kept after the run, and the
// next run reuses it when it holds N entities loaded by the same generator,
// loader and domain code (a fingerprint in the database's comment; newer
// migrations are applied to it); --reload loads it anew.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, createSecretKey } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { seededRandom } from './lib/generate.ts';
import { BENCH_SENDERS, benchSender, DEFAULT_ENTITY_TYPES, loadGeneratedEntities } from './lib/load.ts';
import { commandOptions, isScript, reportFigures } from './lib/cli.ts';
import { median, runsNote, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, openDatabase, recreateDatabase, startStack, type Stack } from './lib/stack.ts';
import { freePort } from '../scripts/lib/ports.ts';
import { runLoad } from './lib/http-load.ts';
import { authorizationValue, canonicalString, formatNdaDate, NDA_DATE_HEADER, ndaSignature } from '../api/auth/nda-hmac.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const MB = 2 ** 20;
const CONCURRENCY = 32;
const SEARCH_REQUESTS = 200;
const UPDATES_PAGE_SIZE = 50_000;
const SEARCH_PAGE_SIZE = 20;
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` };
/** The HMAC API key the signed GET runs use (read permission only, as a syncing client has). */
const BENCH_KEY = { name: 'bench-reader', keyId: 'bench-reader', secret: 'bench-reader-secret-0000000000000000', permissions: ['read'] };
/** The environment the reads run the API with: npm start's defaults (LOG_LEVEL info), plus the bench's key. */
export const READS_ENV = { LOG_LEVEL: 'info', API_KEYS: JSON.stringify([BENCH_KEY]) };

export interface ReadsOptions {
  entities: number;
  /** Repetitions of each timed figure (median reported). */
  runs: number;
  /** Seconds of each GET throughput run. */
  durationSeconds: number;
  /** Distinct random entity ids the GET runs cycle through. */
  ids?: number;
  /** Search requests of each kind per run. Default 200. */
  searchRequests?: number;
  /** A run of searches stops early after this many seconds (the slow ones take seconds each on 1M entities). Default 90. */
  searchSeconds?: number;
  /** Load the database anew even when a matching one is kept. */
  reload?: boolean;
  /** The GET runs are made once per API_PROCESSES count here, side by side. Default 1 and 2. */
  apiProcesses?: number[];
  /** Which parts to run; default all. */
  parts?: ReadonlyArray<'updates' | 'get' | 'search'>;
}

// ---- the database ----

export function readsDatabaseName(entities: number): string {
  return entities === 1_000_000 ? 'er_bench_reads' : `er_bench_reads_${entities}`;
}

/**
 * The files whose code decides which rows the loader writes: a kept database
 * made by other code is not reused. Migrations are not among them: a kept
 * database gets the newer ones from openDatabase, as a deployed database
 * does, and a migration that adds derived rows backfills them (the name word
 * index does); a migration that changes what the write path stores comes
 * with a change to these files.
 */
const LOADER_FILES = [
  'bench/lib/generate.ts',
  'bench/lib/load.ts',
  'db/copy.ts',
  'db/sql.ts',
  'domain/model.ts',
  'domain/text.ts',
  'domain/search-values.ts',
  'services/batches/apply.ts',
  'db/batches.ts',
  'db/apply/write-plan.ts',
  'db/apply/transaction.ts',
  // The v2 document stored beside each record (entity.document) and what writes it.
  'domain/xml/entity-writer.ts',
  'domain/xml/compiled-entity-writer.ts',
  'domain/xml/date-time.ts',
  'domain/xml/escape.ts',
  'domain/xml/markup.ts',
  'domain/xml/vocabulary.ts',
  'domain/xml/vocabulary-shape.ts',
  'domain/xml/vocabulary-v1.ts',
  'domain/xml/vocabulary-v2.ts',
  'domain/xml/write-items.ts',
  'domain/xml/write-metadata.ts',
];

export function loaderFingerprint(entities: number): string {
  const hash = createHash('sha256').update(`entities=${entities}\n`);
  const files = [
    ...LOADER_FILES,
    ...readdirSync(join(ROOT, 'domain/batch')).map((name) => `domain/batch/${name}`),
    ...readdirSync(join(ROOT, 'engine/batch')).map((name) => `engine/batch/${name}`),
  ].sort();
  for (const file of files) hash.update(`${file}\n`).update(readFileSync(join(ROOT, file)));
  return `entity-records bench/reads ${hash.digest('hex').slice(0, 16)}`;
}

export async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * The loaded database of `entities` entities: the kept one when its
 * fingerprint and entity count match, else dropped, created and loaded.
 * Returns its URL and a line for the output saying which it was.
 */
export async function readsDatabase(entities: number, reload = false): Promise<{ url: string; name: string; how: string }> {
  const name = readsDatabaseName(entities);
  const fingerprint = loaderFingerprint(entities);
  if (!reload) {
    const url = await openDatabase(name);
    const [comment] = await query<{ comment: string | null }>(
      url,
      'select shobj_description(oid, $1) as comment from pg_database where datname = current_database()',
      ['pg_database'],
    );
    if (comment?.comment?.startsWith(fingerprint)) {
      const [count] = await query<{ n: string }>(url, 'select count(*) as n from entity');
      if (Number(count?.n) === entities)
        return {
          url,
          name,
          how: `reused database ${name} (${entities.toLocaleString('en')} entities; ${comment.comment.slice(fingerprint.length).trim()})`,
        };
    }
  }
  const url = await recreateDatabase(name);
  let last = 0;
  const result = await loadGeneratedEntities(url, entities, {
    onProgress: (loaded, total) => {
      if (loaded - last >= total / 10 || loaded === total) {
        last = loaded;
        process.stderr.write(`reads: loaded ${loaded.toLocaleString('en')} / ${total.toLocaleString('en')} entities\n`);
      }
    },
  });
  const how = `loaded ${entities.toLocaleString('en')} entities into ${name} in ${result.seconds.toFixed(0)} s (${Math.round(entities / result.seconds)} entities/s, of which ${result.indexSeconds.toFixed(0)} s search indexes + VACUUM ANALYZE)`;
  await query(
    url,
    `comment on database ${pg.escapeIdentifier(name)} is ${pg.escapeLiteral(`${fingerprint} loaded ${new Date().toISOString()} in ${result.seconds.toFixed(0)} s`)}`,
  );
  return { url, name, how };
}

// ---- GET entity vs a bare Koa app ----

export interface Throughput {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU of the benchmark's own process (the load generator) per completed request, µs. */
  clientCpuMicros: number;
}

export type Signing = 'bearer' | 'hmac';

/**
 * The X-NDA-Date and Authorization headers of a GET of `path`, signed with the
 * bench's key by the service's own signing code (the CLI's): the signature
 * covers the host, the path and the date in seconds, so each request is
 * signed anew (no read is ever refused as a replay).
 */
// Prepared once, as the API prepares its keys: a secret given as a string is prepared anew by every createHmac, and that was the load generator's cost, not the service's.
const BENCH_SECRET_KEY = createSecretKey(Buffer.from(BENCH_KEY.secret, 'utf8'));

function hmacHeaders(host: string, path: string, date = formatNdaDate(new Date())): Record<string, string> {
  const signature = ndaSignature(BENCH_SECRET_KEY, canonicalString({ host, method: 'GET', rawPath: path, rawQuery: '', date }));
  return { [NDA_DATE_HEADER]: date, authorization: authorizationValue(BENCH_KEY.keyId, signature) };
}

/** One autocannon run over `paths` in turn; latencies are recorded here, at sub-millisecond resolution. */
export function runAutocannon(baseUrl: string, paths: string[], seconds: number, signing: Signing = 'bearer'): Promise<Throughput> {
  const host = new URL(baseUrl).hostname;
  const cpuBefore = process.cpuUsage();
  return new Promise((done, fail) => {
    let next = 0;
    const latencies: number[] = [];
    const instance = autocannon(
      {
        url: baseUrl,
        connections: CONCURRENCY,
        duration: seconds,
        headers: signing === 'bearer' ? AUTH : {},
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => {
              const path = paths[next++ % paths.length]!;
              request.path = path;
              if (signing === 'hmac') request.headers = { ...request.headers, ...hmacHeaders(host, path) };
              return request;
            },
          },
        ],
      },
      (error, result) => {
        if (error) return fail(error);
        latencies.sort((a, b) => a - b);
        const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
        const cpu = process.cpuUsage(cpuBefore);
        done({
          clientCpuMicros: (cpu.user + cpu.system) / Math.max(1, result.requests.total),
          requestsPerSecond: result.requests.total / (result.duration || seconds),
          p50: at(0.5),
          p99: at(0.99),
          errors: result.errors + result.timeouts + result.non2xx,
        });
      },
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => latencies.push(responseTime));
  });
}

/**
 * One run of the lean load generator (bench/lib/http-load.ts) over `paths` in
 * turn: what the targets are judged on, as pgbench is PostgreSQL's own lean
 * client; autocannon's figures are shown beside them.
 */
export async function runLean(baseUrl: string, paths: string[], seconds: number, signing: Signing = 'bearer'): Promise<Throughput> {
  const host = new URL(baseUrl).hostname;
  const bearer = headerLines(AUTH);
  // A path's signed headers stay the same within a second (the date has seconds): the same array, so the same request bytes.
  const signed = new Map<string, { date: string; lines: readonly string[] }>();
  const headers =
    signing === 'bearer'
      ? () => bearer
      : (path: string) => {
          const date = formatNdaDate(new Date());
          const known = signed.get(path);
          if (known?.date === date) return known.lines;
          const lines = headerLines(hmacHeaders(host, path, date));
          signed.set(path, { date, lines });
          return lines;
        };
  const run = await runLoad({ baseUrl, paths, connections: CONCURRENCY, seconds, headers });
  const at = (q: number) => run.latencies[Math.min(run.latencies.length - 1, Math.floor(q * run.latencies.length))] ?? Number.NaN;
  return {
    requestsPerSecond: run.requests / run.seconds,
    p50: at(0.5),
    p99: at(0.99),
    errors: run.errors,
    clientCpuMicros: run.clientCpuMicros,
  };
}

const headerLines = (headers: Record<string, string>): string[] => Object.entries(headers).map(([name, value]) => `${name}: ${value}`);

/** Multiplier of the id spread: large and odd, so consecutive k land far apart over the whole table. */
const ID_STRIDE = 2_654_435_761;

interface IdSpread {
  min: number;
  range: number;
  count: number;
}

/**
 * `count` ids spread over the table: min + (k × ID_STRIDE) mod range for k
 * in [0, count). A formula rather than a list, so that pgbench (whose scripts
 * hold no arrays) picks from exactly the same ids as autocannon.
 */
export async function idSpread(url: string, count: number): Promise<IdSpread> {
  const [range] = await query<{ min: string; max: string }>(url, 'select min(id) as min, max(id) as max from entity');
  const min = Number(range!.min);
  return { min, range: Number(range!.max) - min + 1, count };
}

export function spreadIds(spread: IdSpread): number[] {
  return Array.from({ length: spread.count }, (_, k) => spread.min + Number((BigInt(k) * BigInt(ID_STRIDE)) % BigInt(spread.range)));
}

/** The pgbench binary: on PATH, else under the server's bin directory (Debian: /usr/lib/postgresql/N/bin). */
function pgbenchBinary(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'pgbench'))) return join(dir, 'pgbench');
  }
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const candidate = `/usr/lib/postgresql/${version}/bin/pgbench`;
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('pgbench not found on PATH nor under /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql-client)');
}

/**
 * The statement GET /api/v2/entities/{id} runs (db/records.ts,
 * RecordRepository.currentDocument: the stored document, the record only
 * where none is stored), for one id; and the one it ran before documents
 * were stored (the record, which current() still reads for v1 and Koa),
 * shown beside it.
 */
const PGBENCH_STATEMENTS = {
  document: 'select document_bytes, case when document_bytes is null then record end as record from entity where id = :id',
  record: 'select record from entity where id = :id',
} as const;
type PgbenchStatement = keyof typeof PGBENCH_STATEMENTS;

/**
 * PostgreSQL's own rate for a statement of GET /api/v2/entities/{id},
 * prepared, 32 clients on 2 threads, over the same ids: what the database
 * serves when nothing but a C client stands between it and the socket.
 */
function runPgbench(databaseUrl: string, spread: IdSpread, seconds: number, dir: string, statement: PgbenchStatement = 'document'): number {
  const script = join(dir, `get-entity-${statement}.sql`);
  // Over the ids of spreadIds().
  const lines = [
    `\\set k random(0, ${spread.count - 1})`,
    `\\set id ${spread.min} + (:k * ${ID_STRIDE}) % ${spread.range}`,
    `${PGBENCH_STATEMENTS[statement]};`,
  ];
  writeFileSync(script, `${lines.join('\n')}\n`);
  const url = new URL(databaseUrl);
  const args = [
    '-n',
    '-M',
    'prepared',
    '-c',
    String(CONCURRENCY),
    '-j',
    '2',
    '-T',
    String(seconds),
    '-f',
    script,
    '-h',
    url.hostname,
    '-p',
    url.port || '5432',
  ];
  if (url.username) args.push('-U', decodeURIComponent(url.username));
  args.push(decodeURIComponent(url.pathname.slice(1)));
  const env = { ...process.env, ...(url.password ? { PGPASSWORD: decodeURIComponent(url.password) } : {}) };
  const output = execFileSync(pgbenchBinary(), args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1];
  if (!tps) throw new Error(`pgbench printed no tps:\n${output}`);
  return Number(tps);
}

/** Fetches each path once from the API, for the bare app to answer with the same bytes. */
async function prefetch(apiUrl: string, paths: string[]): Promise<Record<string, { body: string; contentType: string; etag?: string }>> {
  const responses: Record<string, { body: string; contentType: string; etag?: string }> = {};
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < paths.length; index = next++) {
      const path = paths[index]!;
      const response = await fetch(`${apiUrl}${path}`, { headers: AUTH });
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
      responses[path] = {
        body: await response.text(),
        contentType: response.headers.get('content-type') ?? 'application/xml',
        etag: response.headers.get('etag') ?? undefined,
      };
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return responses;
}

async function startBareKoa(responsesFile: string): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'bench/lib/bare-koa.ts'), responsesFile, String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`bare Koa app exited (code ${code})`)));
    child.stdout!.on('data', (data: Buffer) => {
      if (data.toString().includes('listening')) done();
    });
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  await gone;
}

/**
 * GET entity against pgbench and bare Koa, with the API running `processes`
 * API processes (API_PROCESSES). `targets`: this count's rows carry the
 * targets (the others are shown beside them).
 */
async function getFigures(stack: Stack, options: ReadsOptions, label: string, processes: number, targets: boolean): Promise<Figure[]> {
  const spread = await idSpread(stack.databaseUrl, options.ids ?? 5000);
  const ids = spreadIds(spread);
  const paths = ids.map((id) => `/api/v2/entities/${id}`);
  const dir = mkdtempSync(join(tmpdir(), 'entity-records-reads-'));
  const responsesFile = join(dir, 'responses.json');
  const responses = await prefetch(stack.apiUrl, [...new Set(paths)]);
  const averageBytes = Object.values(responses).reduce((sum, r) => sum + Buffer.byteLength(r.body), 0) / Object.keys(responses).length;
  writeFileSync(responsesFile, JSON.stringify(responses));
  const bare = await startBareKoa(responsesFile);
  try {
    // Warm-up of each (JIT, connection pools, caches), not counted.
    await runLean(stack.apiUrl, paths, 2);
    await runLean(stack.apiUrl, paths, 2, 'hmac');
    await runLean(bare.url, paths, 2);
    await runAutocannon(stack.apiUrl, paths, 2);
    runPgbench(stack.databaseUrl, spread, 2, dir);
    const bearer: Throughput[] = [];
    const hmac: Throughput[] = [];
    const baseline: Throughput[] = [];
    const bearerAutocannon: Throughput[] = [];
    const hmacAutocannon: Throughput[] = [];
    const pgbench: number[] = [];
    const pgbenchRecord: number[] = [];
    const loads: string[] = [];
    // Alternated, so that all of them see the same background load on average.
    for (let run = 0; run < options.runs; run += 1) {
      loads.push(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!);
      pgbench.push(runPgbench(stack.databaseUrl, spread, options.durationSeconds, dir));
      pgbenchRecord.push(runPgbench(stack.databaseUrl, spread, options.durationSeconds, dir, 'record'));
      bearer.push(await runLean(stack.apiUrl, paths, options.durationSeconds));
      hmac.push(await runLean(stack.apiUrl, paths, options.durationSeconds, 'hmac'));
      baseline.push(await runLean(bare.url, paths, options.durationSeconds));
      bearerAutocannon.push(await runAutocannon(stack.apiUrl, paths, options.durationSeconds));
      hmacAutocannon.push(await runAutocannon(stack.apiUrl, paths, options.durationSeconds, 'hmac'));
      const [b, h, k, ab, ah] = [bearer.at(-1)!, hmac.at(-1)!, baseline.at(-1)!, bearerAutocannon.at(-1)!, hmacAutocannon.at(-1)!];
      process.stderr.write(
        `reads: GET entity, ${processes} API process(es), run ${run + 1} (load ${loads.at(-1)}): pgbench ${pgbench.at(-1)!.toFixed(0)} tps (record ${pgbenchRecord.at(-1)!.toFixed(0)}); ` +
          `bearer ${b.requestsPerSecond.toFixed(0)} req/s p50 ${b.p50.toFixed(2)} ms p99 ${b.p99.toFixed(2)} ms (client ${b.clientCpuMicros.toFixed(0)} µs/req); ` +
          `HMAC ${h.requestsPerSecond.toFixed(0)} req/s p50 ${h.p50.toFixed(2)} ms (client ${h.clientCpuMicros.toFixed(0)} µs/req); bare Koa ${k.requestsPerSecond.toFixed(0)} req/s; ` +
          `autocannon: bearer ${ab.requestsPerSecond.toFixed(0)} req/s (client ${ab.clientCpuMicros.toFixed(0)} µs/req), HMAC ${ah.requestsPerSecond.toFixed(0)} req/s (client ${ah.clientCpuMicros.toFixed(0)} µs/req)\n`,
      );
    }
    const errors = [...bearer, ...hmac, ...baseline, ...bearerAutocannon, ...hmacAutocannon].reduce((sum, r) => sum + r.errors, 0);
    if (errors > 0) throw new Error(`GET entity benchmark: ${errors} failed requests`);
    const pgbenchTps = median(pgbench);
    const apis = `${processes} API process${processes === 1 ? '' : 'es'}`;
    const common = `${ids.length} ids, ${(averageBytes / 1024).toFixed(1)} KB each; ${apis}, LOG_LEVEL info; load average ${loads.join(' / ')}`;
    const throughput = (name: string, runs: Throughput[], ratio: number, note: string): Figure => {
      const rps = median(runs.map((r) => r.requestsPerSecond));
      return {
        figure: `GET entity, ${name}, c=${CONCURRENCY}, ${apis}, ${label}`,
        value: rps,
        unit: 'req/s',
        baseline: pgbenchTps,
        baselineName: 'pgbench',
        target: targets ? `≥ ${ratio}× pgbench` : '-',
        met: rps >= ratio * pgbenchTps,
        info: !targets,
        note: `${note}; lean client (bench/lib/http-load.ts), ${median(runs.map((r) => r.clientCpuMicros)).toFixed(0)} µs of its CPU a request; ${runsNote(runs.map((r) => r.requestsPerSecond))}`,
      };
    };
    /** An informational rate shown beside pgbench's. */
    const besidePgbench = (figure: string, rps: number, note: string): Figure => ({
      figure,
      value: rps,
      unit: 'req/s',
      baseline: pgbenchTps,
      baselineName: 'pgbench',
      target: '-',
      met: true,
      info: true,
      note,
    });
    const autocannonFigure = (name: string, runs: Throughput[]): Figure =>
      besidePgbench(
        `GET entity, ${name}, autocannon, c=${CONCURRENCY}, ${apis}`,
        median(runs.map((r) => r.requestsPerSecond)),
        `the same requests from autocannon (a full HTTP client in Node), ${median(runs.map((r) => r.clientCpuMicros)).toFixed(0)} µs of its CPU a request, p99 ${median(runs.map((r) => r.p99)).toFixed(2)} ms; ${runsNote(runs.map((r) => r.requestsPerSecond))}`,
      );
    const latency = (name: string, runs: Throughput[]): Figure => {
      const p50 = median(runs.map((r) => r.p50));
      return {
        figure: `GET entity p50, ${name}, c=${CONCURRENCY}, ${apis}`,
        value: p50,
        unit: 'ms',
        target: '-',
        met: true,
        info: true,
        note: runsNote(runs.map((r) => r.p50)),
      };
    };
    const bareRps = median(baseline.map((r) => r.requestsPerSecond));
    return [
      {
        figure: `pgbench, ${PGBENCH_STATEMENTS.document.replace(':id', '$1')}, c=${CONCURRENCY} (beside ${apis})`,
        value: pgbenchTps,
        unit: 'tps',
        target: '-',
        met: true,
        info: true,
        note: `the route's statement (the stored document); -n -M prepared -c ${CONCURRENCY} -j 2 -T ${options.durationSeconds}, the same ${ids.length} ids; ${runsNote(pgbench)}`,
      },
      {
        figure: `pgbench, ${PGBENCH_STATEMENTS.record.replace(':id', '$1')}, c=${CONCURRENCY} (beside ${apis})`,
        value: median(pgbenchRecord),
        unit: 'tps',
        target: '-',
        met: true,
        info: true,
        note: `the route's statement before documents were stored, for comparison: bearer ${(median(bearer.map((r) => r.requestsPerSecond)) / median(pgbenchRecord)).toFixed(2)}×, HMAC ${(median(hmac.map((r) => r.requestsPerSecond)) / median(pgbenchRecord)).toFixed(2)}× of it; ${runsNote(pgbenchRecord)}`,
      },
      throughput('bearer token', bearer, 0.4, common),
      latency('bearer token', bearer),
      throughput('HMAC-signed', hmac, 0.3, `each request signed (NDA-HMAC-SHA256, key with read permission)`),
      autocannonFigure('bearer token', bearerAutocannon),
      autocannonFigure('HMAC-signed', hmacAutocannon),
      latency('HMAC-signed', hmac),
      ...(['bearer token', 'HMAC-signed'] as const).map((name): Figure => {
        const runs = name === 'bearer token' ? bearer : hmac;
        const p99 = median(runs.map((r) => r.p99));
        return {
          figure: `GET entity p99, ${name}, c=${CONCURRENCY}, ${apis}`,
          value: p99,
          unit: 'ms',
          baseline: median(baseline.map((r) => r.p99)),
          baselineName: 'bare Koa',
          target: targets ? '≤ 20 ms' : '-',
          met: p99 <= 20,
          info: !targets,
          note: runsNote(runs.map((r) => r.p99)),
        };
      }),
      besidePgbench(
        `bare Koa, the same bytes, c=${CONCURRENCY} (beside ${apis})`,
        bareRps,
        `one middleware, no router/auth/DB/XML (bench/lib/bare-koa.ts), one process; p50 ${median(baseline.map((r) => r.p50)).toFixed(2)} ms; ${runsNote(baseline.map((r) => r.requestsPerSecond))}`,
      ),
    ];
  } finally {
    await stopChild(bare.process);
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- search ----

const SURNAMES = ['Novák', 'Svoboda', 'Dvořák', 'Černý', 'Procházka', 'Kučera', 'Veselý', 'Horák', 'Němec', 'Pokorný'];
const FIRST_NAMES = ['Jan', 'Petr', 'Marie', 'Jana', 'Tomáš', 'Eva', 'Karel', 'Lucie', 'Václav', 'Hana'];

interface SearchRequest {
  body: unknown;
  kind: string;
  /** Pages 1..pages in turn (default 1). */
  pages?: number;
  /** A 400 (refused as too broad) is an answer too. */
  mayRefuse?: boolean;
}

/** A fragment inside each surname (not at its start): what a user types who remembers part of a name. */
const FRAGMENTS = ['ovák', 'vobod', 'vořá', 'erný', 'cház', 'učer', 'eselý', 'orák', 'ěme', 'okorn'];

/**
 * name CT_CONTAIN, in four kinds in turn: a surname (about 1 in 30
 * entities), "surname, first name" (about 1 in 750), an entity's serial
 * from its NM_SUP_GEN ("c3-417)", one entity) and a fragment inside a
 * surname ("ovák": the surname's entities and any other word holding it).
 */
function nameContainsRequests(entities: number, count: number): SearchRequest[] {
  const random = seededRandom(7);
  const chunks = Math.max(1, Math.ceil(entities / 10_000));
  return Array.from({ length: count }, (_, index) => {
    const surname = SURNAMES[index % SURNAMES.length]!;
    const kind = ['surname', 'surname, first', 'serial', 'fragment'][index % 4]!;
    const values: Record<string, () => string> = {
      surname: () => surname,
      'surname, first': () => `${surname}, ${FIRST_NAMES[Math.floor(random() * FIRST_NAMES.length)]}`,
      serial: () => `c${Math.floor(random() * chunks)}-${Math.floor(random() * Math.min(entities, 10_000))})`,
      fragment: () => FRAGMENTS[index % FRAGMENTS.length]!,
    };
    const value = values[kind]!();
    return { kind, body: { cond: { condType: 'index', name: 'name', comparator: 'CT_CONTAIN', value } } };
  });
}

/** types + state: one of the four loaded types (a quarter of the entities each), with one or two states, pages 1-5. */
function typesStateRequests(count: number): SearchRequest[] {
  return Array.from({ length: count }, (_, index) => ({
    pages: 5,
    kind: index % 2 === 0 ? 'type, ERS_NEW' : 'type, ERS_NEW+ERS_APPROVED',
    body: {
      types: [DEFAULT_ENTITY_TYPES[index % DEFAULT_ENTITY_TYPES.length]],
      state: index % 2 === 0 ? ['ERS_NEW'] : ['ERS_NEW', 'ERS_APPROVED'],
    },
  }));
}

/**
 * userRoles SENDER with a userUuid, in turn: one of the loader's senders (a
 * tenth of the records each, bench/lib/load.ts benchSender), pages 1-5, and a
 * UUID nobody holds (an empty result: what took 4.3 s on 1,200,000 entities).
 */
function userRequests(count: number): SearchRequest[] {
  const random = seededRandom(11);
  return Array.from({ length: count }, (_, index) => {
    const hit = index % 2 === 0;
    const userUuid = hit
      ? benchSender(Math.floor(random() * BENCH_SENDERS)).uuid
      : `ffffffff-0000-4000-8000-${String(index).padStart(12, '0')}`;
    return {
      kind: hit ? 'SENDER + userUuid, a sender' : 'SENDER + userUuid, nobody',
      pages: hit ? 5 : 1,
      body: { userRoles: 'SENDER', userUuid },
    };
  });
}

/**
 * A `part` condition every record meets: PT_NAME alone, and PT_BODY with an
 * item type every record has. Either answers with its exact total or is
 * refused as too broad (400): both count, within the second the issue allows.
 */
function broadPartRequests(count: number): SearchRequest[] {
  return Array.from({ length: count }, (_, index) => ({
    kind: index % 2 === 0 ? 'part PT_NAME' : 'part PT_BODY, value GENDER',
    mayRefuse: true,
    body: {
      cond:
        index % 2 === 0
          ? { condType: 'PART', partType: 'PT_NAME' }
          : { condType: 'PART', partType: 'PT_BODY', cond: { condType: 'VALUE', itemTypes: ['GENDER'] } },
    },
  }));
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

/** The requests one after the other: latency (to the last byte) of each, by kind. */
async function runSearches(
  apiUrl: string,
  requests: SearchRequest[],
  budgetSeconds = Number.POSITIVE_INFINITY,
): Promise<{ p50: number; p95: number; byKind: Map<string, number[]>; count: number; refused: number }> {
  const times: number[] = [];
  const byKind = new Map<string, number[]>();
  let refused = 0;
  const deadline = performance.now() + budgetSeconds * 1000;
  for (const [index, request] of requests.entries()) {
    // The kinds alternate (4 of names, 2 of types), so a run cut short at a whole cycle still has each kind in its share.
    if (performance.now() > deadline && index % 12 === 0) break;
    const page = 1 + (Math.floor(index / 2) % (request.pages ?? 1));
    const started = performance.now();
    const response = await fetch(`${apiUrl}/api/v2/search?page=${page}&pageSize=${SEARCH_PAGE_SIZE}`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify(request.body),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    const isRefusal = response.status === 400 && request.mayRefuse === true && text.includes('SearchTooBroad');
    if (response.status !== 200 && !isRefusal)
      throw new Error(`search ${JSON.stringify(request.body)} answered ${response.status}: ${text.slice(0, 500)}`);
    if (isRefusal) refused += 1;
    times.push(ms);
    byKind.set(request.kind, [...(byKind.get(request.kind) ?? []), ms]);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), byKind, count: times.length, refused };
}

async function searchFigures(stack: Stack, options: ReadsOptions, label: string): Promise<Figure[]> {
  const figures: Figure[] = [];
  const count = options.searchRequests ?? SEARCH_REQUESTS;
  // The targets: name and user filters p95 ≤ 100 ms, types + state ≤ 50 ms, anything ≤ 1 s or refused.
  const sets: [string, SearchRequest[], number][] = [
    ['name CT_CONTAIN', nameContainsRequests(options.entities, count), 100],
    ['types + state', typesStateRequests(count), 50],
    ['user filter', userRequests(count), 100],
    ['broad part', broadPartRequests(Math.min(count, 20)), 1000],
  ];
  for (const [name, requests, target] of sets) {
    await runSearches(stack.apiUrl, requests.slice(0, 6), 10); // warm-up
    const budget = options.searchSeconds ?? 90;
    const runs: Awaited<ReturnType<typeof runSearches>>[] = [];
    for (let run = 0; run < options.runs; run += 1) runs.push(await runSearches(stack.apiUrl, requests, budget));
    const counts = runs.map((r) => r.count);
    const sent = counts.every((n) => n === requests.length)
      ? `${requests.length}`
      : `${counts.join(' / ')} (of ${requests.length}; runs stop after ${budget} s)`;
    const refused = runs.reduce((sum, r) => sum + r.refused, 0);
    const refusals = requests.some((request) => request.mayRefuse)
      ? `; ${refused} of ${counts.reduce((a, b) => a + b, 0)} refused as too broad (400)`
      : '';
    const kinds = [...runs[0]!.byKind.keys()].map((kind) => {
      const all = runs.flatMap((r) => r.byKind.get(kind) ?? []).sort((a, b) => a - b);
      return `${kind} p50 ${percentile(all, 0.5).toFixed(0)} / p95 ${percentile(all, 0.95).toFixed(0)} ms`;
    });
    process.stderr.write(`reads: search ${name}: ${kinds.join('; ')}\n`);
    const p50 = median(runs.map((r) => r.p50));
    const p95 = median(runs.map((r) => r.p95));
    figures.push(
      {
        figure: `search ${name} p50, ${label}`,
        value: p50,
        unit: 'ms',
        target: '-',
        met: true,
        info: true,
        note: `${sent} sequential requests per run, pageSize ${SEARCH_PAGE_SIZE}${refusals}; ${runsNote(runs.map((r) => r.p50))}`,
      },
      {
        figure: `search ${name} p95, ${label}`,
        value: p95,
        unit: 'ms',
        target: `≤ ${target} ms`,
        met: p95 <= target,
        note: `${runsNote(runs.map((r) => r.p95))}; ${kinds.join('; ')}`,
      },
    );
  }
  return figures;
}

// ---- updates ----

function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

async function updatesFigures(stack: Stack, options: ReadsOptions, label: string): Promise<Figure[]> {
  const transactions = await query<{ uuid: string }>(
    stack.databaseUrl,
    '(select uuid, seq from transaction order by seq limit 1) union all (select uuid, seq from transaction order by seq desc limit 1) order by seq',
  );
  const [from, to] = [transactions[0]!.uuid, transactions.at(-1)!.uuid];
  const path = `/api/v2/updates?fromTransId=${from}&toTransId=${to}&page=1&pageSize=${UPDATES_PAGE_SIZE}`;
  const pid = stack.api.pid!;
  const before = memory(pid);
  const seconds: number[] = [];
  let bytes = 0;
  let records = 0;
  let after = before;
  for (let run = 0; run < options.runs; run += 1) {
    const started = performance.now();
    const response = await fetch(`${stack.apiUrl}${path}`, { headers: AUTH });
    const text = await response.text();
    seconds.push((performance.now() - started) / 1000);
    if (response.status !== 200) throw new Error(`updates answered ${response.status}: ${text.slice(0, 500)}`);
    bytes = Buffer.byteLength(text);
    records = text.split('<revInfo ').length - 1;
    after = memory(pid);
    process.stderr.write(
      `reads: updates page of ${UPDATES_PAGE_SIZE}: ${seconds.at(-1)!.toFixed(2)} s, ${(bytes / MB).toFixed(1)} MB; API VmRSS ${(after.rss / MB).toFixed(0)} MB, VmHWM ${(after.hwm / MB).toFixed(0)} MB\n`,
    );
  }
  const value = median(seconds);
  // Growth of the resident set: the peak during the runs (VmHWM, when above the start) over the RSS before them.
  const growth = (Math.max(after.hwm, after.rss) - before.rss) / MB;
  const startupPeak = before.hwm > before.rss ? ` (VmHWM was ${(before.hwm / MB).toFixed(0)} MB before: start-up peak)` : '';
  return [
    {
      figure: `updates page of ${UPDATES_PAGE_SIZE.toLocaleString('en')}, ${label}`,
      value,
      unit: 's',
      target: '≤ 3 s',
      met: value <= 3,
      note: `time to last byte, ${(bytes / MB).toFixed(1)} MB${records ? `, ${records} records` : ''}; ${runsNote(seconds, 's')}`,
    },
    {
      figure: `API RSS growth, updates page of ${UPDATES_PAGE_SIZE.toLocaleString('en')}`,
      value: growth,
      unit: 'MB',
      target: '≤ 100 MB',
      met: growth <= 100,
      note: `VmRSS ${(before.rss / MB).toFixed(0)} → ${(after.rss / MB).toFixed(0)} MB, VmHWM ${(after.hwm / MB).toFixed(0)} MB${startupPeak}; peak over ${options.runs} runs`,
    },
  ];
}

// ---- all of it ----

export async function readsFigures(options: ReadsOptions): Promise<Figure[]> {
  const database = await readsDatabase(options.entities, options.reload);
  process.stderr.write(`reads: ${database.how}\n`);
  const stack = await startStack(database.name, READS_ENV, { reuseDatabase: true });
  const label = `${options.entities.toLocaleString('en')} entities`;
  try {
    const parts = new Set(options.parts ?? ['updates', 'get', 'search']);
    // Updates first, on the fresh API, so that its VmHWM is this page's peak and not the GET runs'.
    const figures = parts.has('updates') ? await updatesFigures(stack, options, label) : [];
    if (parts.has('get')) {
      // The targets go with npm start's count (one per core), else with the largest count measured.
      const counts = options.apiProcesses ?? [1, 2];
      const targetCount = counts.includes(availableParallelism()) ? availableParallelism() : Math.max(...counts);
      for (const processes of counts) {
        await stack.killApi('SIGTERM');
        await stack.startApi({ API_PROCESSES: String(processes) });
        figures.push(...(await getFigures(stack, options, label, processes, processes === targetCount)));
      }
    }
    if (parts.has('search')) figures.push(...(await searchFigures(stack, options, label)));
    if (stack.unexpectedExits.length > 0) throw new Error(stack.unexpectedExits.join('; '));
    if (figures[0])
      figures[0].note = `${figures[0].note}; ${database.how.startsWith('reused') ? 'database reused' : 'database loaded this run'}`;
    return figures;
  } finally {
    await stack.stop();
  }
}

if (isScript(import.meta)) {
  const values = commandOptions(
    {
      entities: '1000000',
      runs: '3',
      duration: '10',
      ids: '5000',
      searches: String(SEARCH_REQUESTS),
      'search-seconds': '90',
      'api-processes': '1,2',
      parts: 'updates,get,search',
    },
    { optional: ['json'], flags: ['reload'] },
  );
  await reportFigures(values.json, () =>
    readsFigures({
      entities: Number(values.entities.replace(/_/g, '')),
      runs: Number(values.runs),
      durationSeconds: Number(values.duration),
      ids: Number(values.ids),
      searchRequests: Number(values.searches),
      searchSeconds: Number(values['search-seconds']),
      reload: values.reload,
      apiProcesses: values['api-processes'].split(',').map(Number),
      parts: values.parts.split(',').map((part) => {
        if (part !== 'updates' && part !== 'get' && part !== 'search')
          throw new Error(`--parts: unknown part ${part} (updates, get, search)`);
        return part;
      }),
    }),
  );
}
