// npm run bench:status [-- --clients 50 --duration 10 --runs 3 --json FILE]
//
// The real v2 client polls GET /api/v2/batches/{id}/status in a loop without
// sleeping. `clients` connections (default 50) do so at once, each in a tight
// loop (autocannon), on ONE batch whose workflow runs, for --duration seconds,
// against the API as a child process (bench/lib/stack.ts). Measured:
//  - the Temporal describes the API sent for those reads, per second (the
//    API's own count, job_status_workflow_reads_total{answer="describe"} on
//    GET /metrics): bounded by the reuse interval JOB_STATUS_CACHE_MS (≈ 1000 /
//    interval per polled job), whatever the number of clients; beside it the
//    same load with JOB_STATUS_CACHE_MS=0 (reads share only a describe in
//    flight);
//  - the API's latency p50 / p99 and its throughput.
// Latencies stand beside the same polling of a FINISHED batch, whose status
// is its row alone (no Temporal): the floor of the route on this machine at
// this moment. The batch stays running because the worker is stopped before
// it is sent: its workflow is open with its activity scheduled, so every
// status read consults the workflow as a read of a PROCESSING batch does (the
// row says the batch has not ended). The worker then comes back, the batch
// completes and its result is fetched as a check. The API runs with LOG_LEVEL
// info, as npm start runs it by default. Each figure is the median of --runs
// runs (running and finished alternated).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { writeGeneratedBatch } from './lib/generate.ts';
import { commandOptions, isScript, loadAverage, reportFigures } from './lib/cli.ts';
import { median, runsNote, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, startStack, type Stack } from './lib/stack.ts';
import { pollUntil } from '../test/support/poll.ts';

const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` };
/** The API's default (config.ts); set here too, so that the figure names the interval it was measured with. */
const REUSE_MS = 500;
const DESCRIBES = 'job_status_workflow_reads_total{answer="describe"}';

export interface StatusPollingOptions {
  /** Connections polling at once, each in a tight loop. */
  clients: number;
  /** Seconds of each measured run. */
  durationSeconds: number;
  /** Repetitions of each figure (median reported). */
  runs: number;
}

interface Run {
  describesPerSecond: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  load: string;
}

/** The token this benchmark's API answers GET /metrics with. */
const METRICS_TOKEN = 'bench-status-metrics-token-0123456789abcdef';

async function describesSoFar(stack: Stack): Promise<number> {
  const text = await (await fetch(`${stack.apiUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${DESCRIBES} `));
  if (line === undefined) throw new Error(`GET /metrics has no ${DESCRIBES}`);
  return Number(line.slice(DESCRIBES.length + 1));
}

/** `clients` connections polling `path` back to back for `seconds`; latencies recorded here, at sub-millisecond resolution. */
function poll(stack: Stack, path: string, clients: number, seconds: number): Promise<Omit<Run, 'describesPerSecond' | 'load'>> {
  return new Promise((done, fail) => {
    const latencies: number[] = [];
    const instance = autocannon(
      { url: `${stack.apiUrl}${path}`, connections: clients, duration: seconds, headers: AUTH },
      (error, result) => {
        if (error) return fail(error);
        latencies.sort((a, b) => a - b);
        const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
        done({
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

async function measure(stack: Stack, path: string, options: StatusPollingOptions, label: string): Promise<Run[]> {
  // Warm-up (JIT, connection pools), not counted.
  await poll(stack, path, options.clients, 1);
  const runs: Run[] = [];
  for (let run = 0; run < options.runs; run += 1) {
    const load = loadAverage().split(' ')[0]!;
    const before = await describesSoFar(stack);
    const started = performance.now();
    const result = await poll(stack, path, options.clients, options.durationSeconds);
    const seconds = (performance.now() - started) / 1000;
    const describesPerSecond = ((await describesSoFar(stack)) - before) / seconds;
    runs.push({ ...result, describesPerSecond, load });
    process.stderr.write(
      `status: ${label} run ${run + 1} (load ${load}): ${describesPerSecond.toFixed(2)} describes/s; ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ${result.errors} errors\n`,
    );
  }
  return runs;
}

async function submit(stack: Stack, file: string): Promise<string> {
  const response = await fetch(`${stack.apiUrl}/api/v2/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/xml', ...AUTH },
    body: readFileSync(file),
  });
  if (response.status !== 200) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as string;
}

async function detail(stack: Stack, id: string): Promise<{ state: string; source: string; workflow: { status: string | null } }> {
  return (await (await fetch(`${stack.apiUrl}/api/v2/batches/${id}/detail`, { headers: AUTH })).json()) as {
    state: string;
    source: string;
    workflow: { status: string | null };
  };
}

async function waitFinished(stack: Stack, id: string, what: string): Promise<void> {
  await pollUntil(async () => ((await detail(stack, id)).state === 'FINISHED' ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 100,
    what: `batch ${id} to finish ${what}`,
    retryErrors: false,
  });
}

export async function statusPollingFigures(options: StatusPollingOptions): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'entity-records-status-'));
  const files = [join(dir, 'finished.xml'), join(dir, 'running.xml')];
  for (const [index, file] of files.entries())
    await writeGeneratedBatch(file, 10, { batchUuid: randomUUID(), seed: 7 + index, localIdPrefix: `s${index}e` });
  const stack = await startStack('er_bench_status', { LOG_LEVEL: 'info', JOB_STATUS_CACHE_MS: String(REUSE_MS), METRICS_TOKEN });
  try {
    // The floor: the status of a finished batch is its row alone, no Temporal at all.
    const finishedId = await submit(stack, files[0]!);
    await waitFinished(stack, finishedId, 'with the worker running');
    await stack.killWorker('SIGTERM');
    const id = await submit(stack, files[1]!);
    const open = await detail(stack, id);
    if (open.source !== 'workflow' || open.workflow.status !== 'RUNNING')
      throw new Error(`the batch's workflow is not running: ${JSON.stringify(open)}`);
    const path = `/api/v2/batches/${id}/status`;

    // Alternated, so that both see the same background load on average.
    const cached: Run[] = [];
    const floor: Run[] = [];
    for (let run = 0; run < options.runs; run += 1) {
      cached.push(...(await measure(stack, path, { ...options, runs: 1 }, `running batch, JOB_STATUS_CACHE_MS ${REUSE_MS}`)));
      floor.push(...(await measure(stack, `/api/v2/batches/${finishedId}/status`, { ...options, runs: 1 }, 'finished batch (row only)')));
    }
    stack.env.JOB_STATUS_CACHE_MS = '0';
    await stack.killApi('SIGTERM');
    await stack.startApi();
    const shared = await measure(stack, path, options, 'running batch, JOB_STATUS_CACHE_MS 0');

    // The worker comes back: the batch completes and its result is served.
    stack.startWorker();
    await waitFinished(stack, id, "of the worker's return");
    const result = await fetch(`${stack.apiUrl}/api/v2/batches/${id}/result`, { headers: AUTH });
    if (result.status !== 200) throw new Error(`result answered ${result.status} after FINISHED`);
    if (stack.unexpectedExits.length > 0) throw new Error(stack.unexpectedExits.join('; '));

    const errors = [...cached, ...floor, ...shared].reduce((sum, run) => sum + run.errors, 0);
    if (errors > 0) throw new Error(`status polling: ${errors} failed requests`);
    const bound = 1000 / REUSE_MS;
    const describes = median(cached.map((run) => run.describesPerSecond));
    const p99 = median(cached.map((run) => run.p99));
    const common = `${options.clients} clients polling 1 running batch back to back for ${options.durationSeconds} s; one API process, LOG_LEVEL info; load average ${cached.map((run) => run.load).join(' / ')}`;
    const withoutReuse = (pick: (run: Run) => number, unit: string) =>
      `JOB_STATUS_CACHE_MS 0: ${median(shared.map(pick)).toFixed(1)} ${unit}`;
    /** A figure of the running batch beside the finished batch's (row only); for information when it has no target. */
    const besideFinished = (
      measure: string,
      pick: (run: Run) => number,
      unit: string,
      note: string,
      target?: { text: string; met: boolean },
    ): Figure => ({
      figure: `status polling ${measure}, ${options.clients} clients, running batch`,
      value: median(cached.map(pick)),
      unit,
      baseline: median(floor.map(pick)),
      baselineName: 'finished batch, row only',
      ...(target ? { target: target.text, met: target.met } : { target: '-', met: true, info: true }),
      note,
    });
    return [
      {
        figure: `status polling, ${options.clients} clients, 1 running batch: Temporal describes`,
        value: describes,
        unit: '/s',
        baseline: median(shared.map((run) => run.describesPerSecond)),
        baselineName: 'JOB_STATUS_CACHE_MS 0',
        target: `≤ ${bound}/s (1000 / JOB_STATUS_CACHE_MS ${REUSE_MS})`,
        met: describes <= bound * 1.05,
        note: `${common}; ${runsNote(cached.map((run) => run.describesPerSecond))}`,
      },
      besideFinished('p99', (run) => run.p99, 'ms', `${runsNote(cached.map((run) => run.p99))}; ${withoutReuse((run) => run.p99, 'ms')}`, {
        text: '≤ 50 ms',
        met: p99 <= 50,
      }),
      besideFinished('p50', (run) => run.p50, 'ms', `${runsNote(cached.map((run) => run.p50))}; ${withoutReuse((run) => run.p50, 'ms')}`),
      besideFinished(
        'throughput',
        (run) => run.requestsPerSecond,
        'req/s',
        `${withoutReuse((run) => run.requestsPerSecond, 'req/s')}; the batch completed after the worker came back and its result answered 200`,
      ),
    ];
  } finally {
    await stack.stop();
    await dropDatabase(stack.databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isScript(import.meta)) {
  const values = commandOptions({ clients: '50', duration: '10', runs: '3' }, { optional: ['json'], flags: ['quick'] });
  await reportFigures(values.json, () =>
    statusPollingFigures(
      values.quick
        ? { clients: Number(values.clients), durationSeconds: 3, runs: 1 }
        : { clients: Number(values.clients), durationSeconds: Number(values.duration), runs: Number(values.runs) },
    ),
  );
}
