// npm run bench:ingest [-- --sizes 1000,10000,100000 --runs 1 --json FILE]
// Time from POST to COMPLETED for generated batches of new entities, worker
// peak RSS, and PostgreSQL COPY of the same rows into the same tables. The
// runs of one size share one stack (tables truncated between runs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { writeGeneratedBatch } from './lib/generate.ts';
import { median, printTable, runsNote, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, peakRss, recreateDatabase, startStack, type Stack } from './lib/stack.ts';

const COPIED_TABLES = ['batch', 'transaction', 'entity', 'revision', 'search_value', 'entity_participant'];

export interface IngestRun {
  entities: number;
  bytes: number;
  seconds: number;
  workerPeakRss: number;
  copySeconds: number;
}

function psql(url: string, command: string): void {
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', command], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** COPY of the rows the service wrote, into freshly migrated tables with the same indexes. */
function timeCopy(sourceUrl: string, dir: string): Promise<number> {
  for (const table of COPIED_TABLES) psql(sourceUrl, `\\copy ${table} to '${join(dir, `${table}.copy`)}'`);
  return recreateDatabase('er_bench_copy').then(async (targetUrl) => {
    const started = performance.now();
    for (const table of COPIED_TABLES) psql(targetUrl, `\\copy ${table} from '${join(dir, `${table}.copy`)}'`);
    const seconds = (performance.now() - started) / 1000;
    await dropDatabase(targetUrl);
    return seconds;
  });
}

/** Every table a batch writes, emptied between the runs that share a stack. */
const RESET_SQL = `truncate batch, batch_body, transaction, entity, revision, search_value, entity_participant, export_request restart identity;
  alter sequence entity_id_seq restart`;

/** Submits the batch in `file` to the stack's API and waits until it is COMPLETED; returns the seconds from POST to COMPLETED. */
async function submitAndWait(stack: Stack, file: string): Promise<number> {
  const body = readFileSync(file);
  const started = performance.now();
  const response = await fetch(`${stack.apiUrl}/api/v2/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/xml', authorization: `Bearer ${BENCH_TOKEN}` },
    body,
  });
  if (response.status !== 200) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
  const updateRequestId = (await response.json()) as string;
  for (;;) {
    const status = (await (
      await fetch(`${stack.apiUrl}/api/v2/batches/${updateRequestId}/detail`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } })
    ).json()) as { status: string };
    if (status.status === 'COMPLETED') break;
    if (status.status === 'FAILED') throw new Error(`batch failed: ${await (await fetch(`${stack.apiUrl}/api/v2/batches/${updateRequestId}/result`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } })).text()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
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
  const stack = await startStack('er_bench_ingest', { BATCH_MAX_BYTES: String(1024 * 1024 * 1024), ...(process.env.PROBE_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROBE_PROF}` } : {}) });
  try {
    const results: IngestRun[] = [];
    for (let run = 0; run < runs; run += 1) {
      if (run > 0) psql(stack.databaseUrl, RESET_SQL);
      const file = join(dir, 'batch.xml');
      // A new batch UUID per run (the service refuses a batch it has already seen), the same entities.
      const bytes = await writeGeneratedBatch(file, entities, { batchUuid: randomUUID(), seed: entities });
      const seconds = await submitAndWait(stack, file);
      const workerPeakRss = peakRss(stack.worker.pid!);
      const copySeconds = await timeCopy(stack.databaseUrl, dir);
      results.push({ entities, bytes, seconds, workerPeakRss, copySeconds });
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

export async function ingestFigures(sizes: number[], runs: number): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const size of sizes) {
    const results = await ingestRuns(size, runs);
    for (const result of results) {
      process.stderr.write(`ingest ${size}: ${result.seconds.toFixed(2)} s (COPY ${result.copySeconds.toFixed(2)} s), worker peak ${(result.workerPeakRss / 2 ** 20).toFixed(0)} MB\n`);
    }
    const seconds = median(results.map((r) => r.seconds));
    const copy = median(results.map((r) => r.copySeconds));
    const rss = Math.max(...results.map((r) => r.workerPeakRss));
    figures.push({
      figure: `ingest ${size.toLocaleString('en')} entities (${(results[0]!.bytes / 2 ** 20).toFixed(0)} MB)`,
      value: seconds,
      unit: 's',
      baseline: copy,
      baselineName: 'COPY',
      target: TARGET_SECONDS[size] !== undefined ? `≤ ${TARGET_SECONDS[size]} s and ≤ 3× COPY` : '≤ 3× COPY',
      met: (TARGET_SECONDS[size] === undefined || seconds <= TARGET_SECONDS[size]!) && seconds <= 3 * copy,
      note: `${Math.round(size / seconds)} entities/s; ${runsNote(results.map((r) => r.seconds), 's')}; COPY ${runsNote(results.map((r) => r.copySeconds), 's')}`,
    });
    if (size >= 100_000) {
      figures.push({
        figure: `worker peak RSS, ingest ${size.toLocaleString('en')}`,
        value: rss / 2 ** 20,
        unit: 'MB',
        target: '≤ 1536 MB',
        met: rss <= 1.5 * 2 ** 30,
      });
    }
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { sizes: { type: 'string', default: '1000,10000,100000' }, runs: { type: 'string', default: '1' }, json: { type: 'string' } } });
  const figures = await ingestFigures(values.sizes!.split(',').map(Number), Number(values.runs));
  printTable(figures);
  if (values.json) writeFileSync(values.json, JSON.stringify(figures, null, 2));
}
