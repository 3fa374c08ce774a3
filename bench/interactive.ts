// npm run bench:interactive [-- --entities 100000 --saves 20 --bulk-slots 1 --quick --json FILE]
// Interactive work beside an import: a generated import of
// `entities` new entities is POSTed to one stack (the worker and the API as
// `npm start` runs them), and once its apply runs, `saves` one-entity
// batches are submitted one after another, each polled at
// GET /api/v2/batches/{id}/status until FINISHED, as the real client polls.
// Reports p50 / p95 / max from POST to FINISHED and whether the import was
// still running when each save finished. The worker gets `bulk-slots` bulk
// slots (default 1), so that the one import holds every one of them and a
// save that waited for a bulk slot would wait for the whole import.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { serializeBatch } from '../domain/xml/index.ts';
import { generateCreates, writeGeneratedBatch } from './lib/generate.ts';
import { median, printTable, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, startStack, type Stack } from './lib/stack.ts';
import { pollUntil } from '../test/support/poll.ts';

const TARGET_P95_SECONDS = 2;
const POLL_MS = 20;
const MB = 2 ** 20;

export interface InteractiveOptions {
  entities: number;
  saves: number;
  bulkSlots?: number;
}

export interface InteractiveRun {
  importBytes: number;
  /** Seconds from POST to FINISHED, per save, in order. */
  saves: number[];
  /** Whether the import was still unfinished when each save finished. */
  importRunning: boolean[];
  /** Seconds from the import's POST to its COMPLETED. */
  importSeconds: number;
}

const headers = { authorization: `Bearer ${BENCH_TOKEN}` };

async function post(stack: Stack, body: Buffer | string): Promise<string> {
  const response = await fetch(`${stack.apiUrl}/api/v2/batches`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/xml' },
    body,
  });
  if (response.status !== 200) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as string;
}

/** The service's own state of a batch (ACCEPTED, PROCESSING, COMPLETED, FAILED). */
async function detail(stack: Stack, id: string): Promise<string> {
  return ((await (await fetch(`${stack.apiUrl}/api/v2/batches/${id}/detail`, { headers })).json()) as { status: string }).status;
}

/** Polls the real client's status resource until FINISHED (or ERROR); returns the state. */
function untilFinished(stack: Stack, id: string): Promise<string> {
  return pollUntil(
    async () => {
      const { state } = (await (await fetch(`${stack.apiUrl}/api/v2/batches/${id}/status`, { headers })).json()) as { state: string };
      return state === 'FINISHED' || state === 'ERROR' ? state : undefined;
    },
    { timeoutMs: 5 * 60_000, intervalMs: POLL_MS, what: `batch ${id} to finish`, retryErrors: false },
  );
}

/** Polls the service's own state of the import until it has left ACCEPTED (`begun`) or COMPLETED; throws if it FAILED. */
function untilImport(stack: Stack, id: string, until: 'begun' | 'COMPLETED'): Promise<string> {
  return pollUntil(
    async () => {
      const status = await detail(stack, id);
      if (status === 'FAILED') throw new Error('the import FAILED');
      return (until === 'begun' ? status !== 'ACCEPTED' : status === 'COMPLETED') ? status : undefined;
    },
    {
      timeoutMs: 30 * 60_000,
      intervalMs: until === 'begun' ? 100 : 250,
      what: `the import ${until === 'begun' ? 'to begin' : 'to complete'}`,
      retryErrors: false,
    },
  );
}

export async function interactiveRun(options: InteractiveOptions): Promise<InteractiveRun> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-records-interactive-'));
  const file = join(dir, 'import.xml');
  const importBytes = await writeGeneratedBatch(file, options.entities, { batchUuid: randomUUID(), seed: options.entities });
  const stack = await startStack('er_bench_interactive', {
    BATCH_MAX_BYTES: String(1024 * MB),
    WORKER_MAX_CONCURRENT_ACTIVITIES: String(options.bulkSlots ?? 1),
  });
  try {
    const importStarted = performance.now();
    const importId = await post(stack, readFileSync(file));
    // The import's apply has begun (it holds a bulk slot) before the first save.
    await untilImport(stack, importId, 'begun');
    process.stderr.write(
      `interactive: import of ${options.entities} (${(importBytes / MB).toFixed(0)} MB) applying after ${((performance.now() - importStarted) / 1000).toFixed(1)} s\n`,
    );

    const saves: number[] = [];
    const importRunning: boolean[] = [];
    for (let index = 0; index < options.saves; index += 1) {
      const commands = [...generateCreates(1, { seed: 7000 + index, localIdPrefix: `save${index}e` })];
      const xml = serializeBatch({ version: 'v2', batchUuid: randomUUID(), sender: { id: 'bench', name: 'Benchmark' } }, commands, 'v2');
      const started = performance.now();
      const id = await post(stack, xml);
      const state = await untilFinished(stack, id);
      const seconds = (performance.now() - started) / 1000;
      if (state !== 'FINISHED' || (await detail(stack, id)) !== 'COMPLETED') throw new Error(`save ${index} ended ${state}, not COMPLETED`);
      const status = await detail(stack, importId);
      if (status === 'FAILED') throw new Error('the import FAILED');
      saves.push(seconds);
      importRunning.push(status !== 'COMPLETED');
    }

    await untilImport(stack, importId, 'COMPLETED');
    const importSeconds = (performance.now() - importStarted) / 1000;
    if (stack.unexpectedExits.length > 0) throw new Error(stack.unexpectedExits.join('; '));
    return { importBytes, saves, importRunning, importSeconds };
  } finally {
    await stack.stop();
    await dropDatabase(stack.databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The value at quantile `q` (nearest rank). */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

export async function interactiveFigures(options: InteractiveOptions): Promise<Figure[]> {
  const loadBefore = loadavg();
  const run = await interactiveRun(options);
  const p50 = median(run.saves);
  const p95 = quantile(run.saves, 0.95);
  const max = Math.max(...run.saves);
  const during = run.importRunning.filter(Boolean).length;
  const allDuring = during === run.saves.length;
  process.stderr.write(
    `interactive: saves ${run.saves.map((s) => s.toFixed(2)).join(' ')} s; import still running for ${during}/${run.saves.length}; import COMPLETED after ${run.importSeconds.toFixed(0)} s\n`,
  );
  return [
    {
      figure: `one-entity batch POST→FINISHED p95, during a ${options.entities.toLocaleString('en')}-entity import`,
      value: p95,
      unit: 's',
      target: `≤ ${TARGET_P95_SECONDS} s, import still running for all`,
      met: p95 <= TARGET_P95_SECONDS && allDuring,
      note: `p50 ${p50.toFixed(2)} s, max ${max.toFixed(2)} s over ${run.saves.length} one after another; import still running for ${during}/${run.saves.length}, COMPLETED after ${run.importSeconds.toFixed(0)} s (${(run.importBytes / MB).toFixed(0)} MB); ${options.bulkSlots ?? 1} bulk slot(s); load average ${loadBefore} before, ${loadavg()} after`,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      entities: { type: 'string' },
      saves: { type: 'string', default: '20' },
      'bulk-slots': { type: 'string', default: '1' },
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
    },
  });
  const entities = Number(values.entities ?? (values.quick ? 20_000 : 100_000));
  const figures = await interactiveFigures({ entities, saves: Number(values.saves), bulkSlots: Number(values['bulk-slots']) });
  printTable(figures);
  if (values.json) writeFileSync(values.json, JSON.stringify(figures, null, 2));
  if (figures.some((figure) => !figure.met)) process.exitCode = 1;
}
