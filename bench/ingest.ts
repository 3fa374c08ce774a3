// npm run bench:ingest [-- --sizes 1000,10000,100000 --runs 1 --concurrent 2x100000 --json FILE --timeline FILE]
// Time from POST to COMPLETED for generated batches of new entities, worker
// peak RSS, and PostgreSQL COPY of the same rows into the same tables. The
// runs of one size share one stack (tables truncated between runs).
// --timeline FILE: the worker writes each apply's steps there (APPLY_TIMELINE,
// services/batches/apply-timeline.ts), the bench its POST, answer and
// COMPLETED; a summary is printed at the end.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { writeGeneratedBatch } from './lib/generate.ts';
import { median, printTable, runsNote, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, peakRss, recreateDatabase, startStack, type Stack } from './lib/stack.ts';
import { pollUntil } from '../test/support/poll.ts';

const COPIED_TABLES = [
  'batch',
  'transaction',
  'entity',
  'revision',
  'search_value',
  'search_user_role',
  'entity_participant',
  'name_vocabulary',
];
/** What is copied out of a table: a freshly migrated database already holds the genesis transaction (seq 0). */
const COPIED_ROWS: Record<string, string> = { transaction: '(select * from transaction where seq <> 0)' };

export interface IngestRun {
  entities: number;
  bytes: number;
  seconds: number;
  workerPeakRss: number;
  apiPeakRss: number;
  copySeconds: number;
  /** Seconds until the POST was answered (the upload, validated and stored). */
  postSeconds: number;
  /** CPU seconds (user + system) of the worker, of the API and of the database's backends during the run. */
  workerCpu: number;
  apiCpu: number;
  pgCpu: number;
}

/** CPU seconds (user + system) a process has used so far; 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The CPU seconds of each backend now connected to the stack's database, by pid. */
function backendCpu(url: string): Map<number, number> {
  const pids = execFileSync(
    'psql',
    ['-X', '-At', '-d', url, '-c', 'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()'],
    { encoding: 'utf8' },
  );
  return new Map(
    pids
      .split('\n')
      .filter(Boolean)
      .map((pid) => [Number(pid), cpuSeconds(Number(pid))]),
  );
}

/** CPU the backends used since `before` (a backend that connected since counts from 0; one that left meanwhile is lost). */
function backendCpuSince(url: string, before: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of backendCpu(url)) total += seconds - (before.get(pid) ?? 0);
  return total;
}

function psql(url: string, command: string): void {
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', command], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** COPY of the rows the service wrote, into freshly migrated tables with the same indexes. */
function timeCopy(sourceUrl: string, dir: string, entities: number): Promise<number> {
  for (const table of COPIED_TABLES) psql(sourceUrl, `\\copy ${COPIED_ROWS[table] ?? table} to '${join(dir, `${table}.copy`)}'`);
  return recreateDatabase(`er_bench_copy_${entities}`).then(async (targetUrl) => {
    const started = performance.now();
    for (const table of COPIED_TABLES) psql(targetUrl, `\\copy ${table} from '${join(dir, `${table}.copy`)}'`);
    const seconds = (performance.now() - started) / 1000;
    await dropDatabase(targetUrl);
    return seconds;
  });
}

/**
 * Every table a batch writes, emptied between the runs that share a stack
 * (search_user_role, search_user and name_word by the truncate triggers of
 * entity, revision and search_value: naming them here too fails).
 */
const RESET_SQL = `truncate batch, batch_body, batch_body_chunk, transaction, entity, revision, search_value, entity_participant, name_vocabulary, export_request restart identity;
  alter sequence entity_id_seq restart`;

/**
 * `count` different batches of `entities` creates each, submitted at once to
 * one stack: the worker applies them concurrently (up to
 * WORKER_MAX_CONCURRENT_ACTIVITIES). Returns the worker's peak RSS and the
 * seconds until the last one COMPLETED.
 */
export async function concurrentIngest(entities: number, count: number): Promise<{ seconds: number; workerPeakRss: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-records-ingest-'));
  const files: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const file = join(dir, `batch-${index}.xml`);
    await writeGeneratedBatch(file, entities, { batchUuid: randomUUID(), seed: entities + index, localIdPrefix: `c${index}e` });
    files.push(file);
  }
  const stack = await startStack(`er_bench_ingest_${count}x${entities}`, { BATCH_MAX_BYTES: String(1024 * 1024 * 1024) });
  try {
    const started = performance.now();
    await Promise.all(files.map((file) => submitAndWait(stack, file)));
    const seconds = (performance.now() - started) / 1000;
    if (stack.unexpectedExits.length > 0) throw new Error(stack.unexpectedExits.join('; '));
    return { seconds, workerPeakRss: peakRss(stack.worker.pid!) };
  } finally {
    await stack.stop();
    await dropDatabase(stack.databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** With APPLY_TIMELINE set (the worker's apply timeline, services/batches/apply-timeline.ts), the bench's own moments go in the same file. */
function timelineMark(step: string): void {
  if (process.env.APPLY_TIMELINE) appendFileSync(process.env.APPLY_TIMELINE, `${JSON.stringify({ step, at: Date.now() })}\n`);
}

/** The timeline file as a table: each step's wall, worker CPU and backend CPU, the groups summed per phase. */
export function timelineSummary(file: string): string {
  type Line = { step: string; at: number; wallMs?: number; workerCpuMs?: number; pgCpuMs?: number; loopDelayMaxMs?: number };
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
  const out: string[] = [];
  let start = 0;
  const groups = new Map<string, { n: number; wall: number; worker: number; pg: number; loop: number }>();
  const flush = () => {
    for (const [step, sum] of groups) {
      out.push(
        `${''.padStart(9)} ${step.padEnd(34)} ${(sum.wall / 1000).toFixed(2).padStart(8)} ${(sum.worker / 1000).toFixed(2).padStart(8)} ${(sum.pg / 1000).toFixed(2).padStart(8)} ${String(sum.loop).padStart(6)}  (${sum.n} groups)`,
      );
    }
    groups.clear();
  };
  out.push(
    `${'at (s)'.padStart(9)} ${'step'.padEnd(34)} ${'wall'.padStart(8)} ${'worker'.padStart(8)} ${'pg'.padStart(8)} ${'loop'.padStart(6)}`,
  );
  for (const line of lines) {
    if (line.step === 'bench:post') start = line.at;
    if (line.step.startsWith('group:')) {
      const sum = groups.get(line.step) ?? { n: 0, wall: 0, worker: 0, pg: 0, loop: 0 };
      sum.n += 1;
      sum.wall += line.wallMs ?? 0;
      sum.worker += line.workerCpuMs ?? 0;
      sum.pg += line.pgCpuMs ?? 0;
      sum.loop = Math.max(sum.loop, line.loopDelayMaxMs ?? 0);
      groups.set(line.step, sum);
      continue;
    }
    flush();
    const at = ((line.at - start) / 1000).toFixed(2).padStart(9);
    if (line.wallMs === undefined) out.push(`${at} ${line.step}`);
    else
      out.push(
        `${at} ${line.step.padEnd(34)} ${(line.wallMs / 1000).toFixed(2).padStart(8)} ${((line.workerCpuMs ?? 0) / 1000).toFixed(2).padStart(8)} ${((line.pgCpuMs ?? 0) / 1000).toFixed(2).padStart(8)} ${String(line.loopDelayMaxMs ?? '').padStart(6)}`,
      );
  }
  flush();
  return `${out.join('\n')}\n(seconds; worker and pg are CPU seconds of the worker process and of the apply's PostgreSQL backend; loop is the event loop's longest delay in ms)\n`;
}

/** Submits the batch in `file` to the stack's API and waits until it is COMPLETED; returns the seconds from POST to COMPLETED. */
async function submitAndWait(stack: Stack, file: string, answered?: (seconds: number) => void): Promise<number> {
  const body = readFileSync(file);
  const started = performance.now();
  timelineMark('bench:post');
  const response = await fetch(`${stack.apiUrl}/api/v2/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/xml', authorization: `Bearer ${BENCH_TOKEN}` },
    body,
  });
  if (response.status !== 200) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
  const updateRequestId = (await response.json()) as string;
  answered?.((performance.now() - started) / 1000);
  timelineMark('bench:answered');
  await pollUntil(
    async () => {
      const status = (await (
        await fetch(`${stack.apiUrl}/api/v2/batches/${updateRequestId}/detail`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } })
      ).json()) as { status: string };
      if (status.status === 'FAILED')
        throw new Error(
          `batch failed: ${await (await fetch(`${stack.apiUrl}/api/v2/batches/${updateRequestId}/result`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } })).text()}`,
        );
      return status.status === 'COMPLETED' ? true : undefined;
    },
    { timeoutMs: 60 * 60_000, intervalMs: 100, what: `batch ${updateRequestId} to complete`, retryErrors: false },
  );
  timelineMark('bench:completed');
  return (performance.now() - started) / 1000;
}

/**
 * `runs` ingests of a generated batch of `entities` new entities on ONE
 * stack (its start-up, 5-20 s, is not paid per run): before each run but the
 * first, every table the batch writes is truncated, so each run writes into
 * empty tables as on a fresh database. The worker's peak RSS is its VmHWM
 * after that run (so the largest of the runs so far).
 */
export async function ingestRuns(entities: number, runs: number): Promise<IngestRun[]> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-records-ingest-'));
  // A database per size, so runs of different sizes may run side by side.
  const stack = await startStack(`er_bench_ingest_${entities}`, {
    BATCH_MAX_BYTES: String(1024 * 1024 * 1024),
    ...(process.env.PROBE_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROBE_PROF}` } : {}),
  });
  try {
    const results: IngestRun[] = [];
    for (let run = 0; run < runs; run += 1) {
      if (run > 0) psql(stack.databaseUrl, RESET_SQL);
      const file = join(dir, 'batch.xml');
      // A new batch UUID per run (the service refuses a batch it has already seen), the same entities.
      const bytes = await writeGeneratedBatch(file, entities, { batchUuid: randomUUID(), seed: entities });
      const cpuBefore = { worker: cpuSeconds(stack.worker.pid!), api: cpuSeconds(stack.api.pid!), pg: backendCpu(stack.databaseUrl) };
      let postSeconds = 0;
      const seconds = await submitAndWait(stack, file, (answered) => (postSeconds = answered));
      const workerCpu = cpuSeconds(stack.worker.pid!) - cpuBefore.worker;
      const apiCpu = cpuSeconds(stack.api.pid!) - cpuBefore.api;
      const pgCpu = backendCpuSince(stack.databaseUrl, cpuBefore.pg);
      const workerPeakRss = peakRss(stack.worker.pid!);
      const apiPeakRss = peakRss(stack.api.pid!);
      const copySeconds = await timeCopy(stack.databaseUrl, dir, entities);
      results.push({ entities, bytes, seconds, workerPeakRss, apiPeakRss, copySeconds, postSeconds, workerCpu, apiCpu, pgCpu });
    }
    if (stack.unexpectedExits.length > 0) throw new Error(stack.unexpectedExits.join('; '));
    return results;
  } finally {
    await stack.stop();
    await dropDatabase(stack.databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One ingest on a stack of its own. */
export async function ingestOnce(entities: number): Promise<IngestRun> {
  const [result] = await ingestRuns(entities, 1);
  return result!;
}

const TARGET_SECONDS: Record<number, number> = { 10_000: 10, 100_000: 90 };
/** Ingest time against COPY of the same rows, from 100,000 entities up; smaller sizes pay a fixed start. */
const TARGET_COPY_RATIO = 1.4;
const MB = 2 ** 20;

export async function ingestFigures(sizes: number[], runs: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  const peaks = new Map<number, number>();
  for (const size of sizes) {
    const results = await ingestRuns(size, runs);
    for (const result of results) {
      process.stderr.write(
        `ingest ${size}: ${result.seconds.toFixed(2)} s (COPY ${result.copySeconds.toFixed(2)} s), worker peak ${(result.workerPeakRss / MB).toFixed(0)} MB, API peak ${(result.apiPeakRss / MB).toFixed(0)} MB, POST answered ${result.postSeconds.toFixed(1)} s, CPU worker ${result.workerCpu.toFixed(1)} s / API ${result.apiCpu.toFixed(1)} s / PostgreSQL ${result.pgCpu.toFixed(1)} s, load ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}\n`,
      );
    }
    const seconds = median(results.map((r) => r.seconds));
    const copy = median(results.map((r) => r.copySeconds));
    const rss = Math.max(...results.map((r) => r.workerPeakRss));
    const apiRss = Math.max(...results.map((r) => r.apiPeakRss));
    peaks.set(size, rss);
    const ratio = size >= 100_000 ? TARGET_COPY_RATIO : 3;
    const secondsTarget = TARGET_SECONDS[size];
    figures.push({
      figure: `ingest ${size.toLocaleString('en')} entities (${(results[0]!.bytes / MB).toFixed(0)} MB)`,
      value: seconds,
      unit: 's',
      baseline: copy,
      baselineName: 'COPY',
      target: secondsTarget !== undefined ? `≤ ${secondsTarget} s and ≤ ${ratio}× COPY` : `≤ ${ratio}× COPY`,
      met: (secondsTarget === undefined || seconds <= secondsTarget) && seconds <= ratio * copy,
      note: `${Math.round(size / seconds)} entities/s; ${runsNote(
        results.map((r) => r.seconds),
        's',
      )}; COPY ${runsNote(
        results.map((r) => r.copySeconds),
        's',
      )}; load average ${loadavg()[0]!.toFixed(1)}`,
    });
    figures.push({
      figure: `worker peak RSS, ingest ${size.toLocaleString('en')}`,
      value: rss / MB,
      unit: 'MB',
      target: size >= 100_000 ? '≤ 600 MB' : '–',
      met: size < 100_000 || rss <= 600 * MB,
      info: size < 100_000,
      note: `API peak ${(apiRss / MB).toFixed(0)} MB`,
    });
  }
  const small = peaks.get(10_000);
  const large = peaks.get(100_000);
  if (small !== undefined && large !== undefined) {
    figures.push({
      figure: 'worker peak RSS, ingest 100,000 vs 10,000',
      value: large / small,
      unit: '×',
      target: '≤ 1.3×',
      met: large / small <= 1.3,
    });
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '1000,10000,100000' },
      runs: { type: 'string', default: '1' },
      concurrent: { type: 'string' },
      json: { type: 'string' },
      timeline: { type: 'string' },
    },
  });
  // Read by the worker the stack starts (its environment is this process's) and by timelineMark.
  if (values.timeline !== undefined) {
    writeFileSync(values.timeline, '');
    process.env.APPLY_TIMELINE = values.timeline;
  }
  const sizes = values.sizes === '' ? [] : values.sizes!.split(',').map(Number);
  const figures = await ingestFigures(sizes, Number(values.runs));
  // --concurrent 2x100000: that many batches of that size applied at once by one worker.
  if (values.concurrent !== undefined) {
    const [count, entities] = values.concurrent.split('x').map(Number) as [number, number];
    const { seconds, workerPeakRss } = await concurrentIngest(entities, count);
    figures.push({
      figure: `worker peak RSS, ${count} batches of ${entities.toLocaleString('en')} at once`,
      value: workerPeakRss / MB,
      unit: 'MB',
      target: '< 1024 MB',
      met: workerPeakRss < 1024 * MB,
      note: `all COMPLETED ${seconds.toFixed(0)} s after the first POST; load average ${loadavg()[0]!.toFixed(1)}`,
    });
  }
  printTable(figures);
  if (values.timeline !== undefined) process.stdout.write(timelineSummary(values.timeline));
  if (values.json) writeFileSync(values.json, JSON.stringify(figures, null, 2));
}
