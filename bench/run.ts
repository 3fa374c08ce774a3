// The whole benchmark suite in one run, every figure beside its baseline.
//
//   npm run bench                 full sizes (about 25 min on 2 cores with the read database kept, 40 without)
//   npm run bench -- --quick      small sizes, within about 5 minutes (3-4 min measured)
//   npm run bench -- --json FILE  also writes the table (and the machine's load) as JSON
//   npm run bench -- --only ingest,reads   a subset (ingest, validate, reads, export, status, interactive, uploads, feed, sync, oai, refusals, abuse-latency, scale, stream, standby)
//   npm run bench:smoke           every benchmark on tiny sizes: does each still run? (75 s measured on 2 cores at load average 3-5, 213 s at 14)
//
// Each timed figure is measured 3 times (median; the note gives the spread
// (max - min) / median), except the longest ones of the full run (ingest of
// 100,000 and the export of 1,000,000 entities: once, as the note says).
// Prints one table (bench/lib/report.ts) and, as its last line, a headline:
// `bench: 9/11 targets met; ingest 100k in 71 s (2.4× COPY)`. Exits 1 when a
// target is missed or a benchmark failed.
//
// --smoke (what CI runs, before the tests) runs all fifteen benchmarks, uploads,
// feed, sync, oai, refusals, abuse-latency, scale, stream and standby included, on sizes a few seconds long, judges no target (figures
// of tiny sizes say nothing), and prints one line per benchmark, ok or FAILED
// with the error, and last `bench smoke: 10/10 ran in 75 s`. Exits 1 when any
// benchmark threw: a benchmark that no longer runs fails CI. Much of its
// time is the start-up of each benchmark's own stack, not the work.

import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { abuseLatencyFigures, type AbuseLatencyOptions } from './abuse-latency.ts';
import { exportFigures } from './export.ts';
import { ingestFigures } from './ingest.ts';
import { interactiveFigures } from './interactive.ts';
import { printTable, type Figure } from './lib/report.ts';
import { feedFigures } from './feed.ts';
import { oaiFigures } from './oai.ts';
import { readsFigures } from './reads.ts';
import { refusalFigures } from './refusals.ts';
import { scaleFigures } from './scale.ts';
import { standbyFigures } from './standby.ts';
import { streamFigures } from './stream.ts';
import { syncFigures } from './sync.ts';
import { statusPollingFigures, type StatusPollingOptions } from './status-polling.ts';
import { uploadFigures } from './uploads.ts';
import { validationFigures } from './validate.ts';

interface Plan {
  /** Repetitions of each timed figure (median reported), where a section does not say otherwise. */
  runs: number;
  /** The sections run without --only. */
  sections: readonly Section[];
  ingest: { size: number; runs: number }[];
  validateMb: number;
  reads: { entities: number; durationSeconds: number; ids: number; searchRequests: number; searchSeconds: number };
  export: { size: number; runs: number }[];
  status: StatusPollingOptions;
  /** One-entity batches submitted one after another while an import of `entities` is applied. */
  interactive: { entities: number; saves: number };
  /** `uploads` batches of `entities` new entities POSTed at once. */
  uploads: { uploads: number; entities: number };
  /** One-entity batches with and without the commit-order trigger, on `entities` loaded. */
  feed: { entities: number; batches: number };
  /** The real client's first walk of the feed on `entities` records. */
  sync: { entities: number };
  /** Whole-registry OAI-PMH harvests of each size beside its snapshot export. */
  oai: number[];
  /** The broad and odd searches, answered or refused, on `entities` loaded. */
  refusals: { entities: number };
  /** The ordinary client's latency alone and beside each attack of the abuse suite, `seconds` a phase. */
  abuseLatency: AbuseLatencyOptions;
  /** The registry's reads at each of these sizes, and each figure's growth exponent against the size. */
  scale: number[];
  /** Activity Streams pages and push latency with `consumers` connected, over `entities` loaded and `commits` new batches. */
  stream: { entities: number; consumers: number; commits: number };
  /** Reads on a hot standby against the primary, after `entities` imported; `smoke`: one run each, no target judged. */
  standby: { entities: number; smoke: boolean };
}

const RUNS = 3;
const SECTIONS = [
  'ingest',
  'validate',
  'reads',
  'export',
  'status',
  'interactive',
  'uploads',
  'feed',
  'sync',
  'oai',
  'refusals',
  'abuse-latency',
  'scale',
  'stream',
  'standby',
] as const;
type Section = (typeof SECTIONS)[number];
/** The full and quick runs: uploads, feed, sync, oai, refusals, abuse-latency, scale, stream and standby have their own commands (bench:uploads, …, bench:stream, bench:standby) and run there with --only. */
const MEASURED: readonly Section[] = ['ingest', 'validate', 'reads', 'export', 'status', 'interactive'];

const FULL: Plan = {
  runs: RUNS,
  sections: MEASURED,
  ingest: [
    { size: 1_000, runs: RUNS },
    { size: 10_000, runs: RUNS },
    { size: 100_000, runs: 1 },
  ],
  validateMb: 50,
  reads: { entities: 1_000_000, durationSeconds: 10, ids: 5000, searchRequests: 200, searchSeconds: 90 },
  export: [
    { size: 100_000, runs: RUNS },
    { size: 1_000_000, runs: 1 },
  ],
  status: { clients: 50, durationSeconds: 10, runs: RUNS },
  interactive: { entities: 100_000, saves: 20 },
  uploads: { uploads: 12, entities: 30_000 },
  feed: { entities: 100_000, batches: 200 },
  sync: { entities: 1_000_000 },
  oai: [100_000, 1_000_000],
  refusals: { entities: 1_000_000 },
  abuseLatency: { records: 5000, seconds: 20, largeMb: 50, v1Mb: 16 },
  scale: [300_000, 1_000_000, 3_000_000],
  stream: { entities: 1_000_000, consumers: 100, commits: 50 },
  standby: { entities: 100_000, smoke: false },
};

const QUICK: Plan = {
  runs: RUNS,
  sections: MEASURED,
  ingest: [
    { size: 1_000, runs: RUNS },
    { size: 10_000, runs: RUNS },
  ],
  // The full size: the validator's peak RSS is held to 4× the file, and below
  // about 50 MB Node and the compiled schemas (about 100 MB before the first
  // byte) are more than that by themselves. 50 MB adds about 15 s.
  validateMb: 50,
  reads: { entities: 100_000, durationSeconds: 5, ids: 2000, searchRequests: 60, searchSeconds: 20 },
  export: [{ size: 10_000, runs: RUNS }],
  status: { clients: 50, durationSeconds: 3, runs: 1 },
  interactive: { entities: 20_000, saves: 20 },
  uploads: { uploads: 4, entities: 10_000 },
  feed: { entities: 20_000, batches: 50 },
  sync: { entities: 100_000 },
  oai: [20_000],
  refusals: { entities: 100_000 },
  abuseLatency: { records: 5000, seconds: 5, largeMb: 10, v1Mb: 16 },
  scale: [20_000, 60_000],
  stream: { entities: 20_000, consumers: 20, commits: 10 },
  standby: { entities: 20_000, smoke: false },
};

/** Every benchmark once, each a few seconds beside its stack's start-up: whether it runs, not what it measures. */
const SMOKE: Plan = {
  runs: 1,
  sections: SECTIONS,
  // Two runs: the second empties the tables first, the path of every longer run.
  ingest: [{ size: 200, runs: 2 }],
  validateMb: 1,
  reads: { entities: 2_000, durationSeconds: 1, ids: 100, searchRequests: 3, searchSeconds: 3 },
  export: [{ size: 1_000, runs: 1 }],
  status: { clients: 4, durationSeconds: 1, runs: 1 },
  interactive: { entities: 2_000, saves: 2 },
  uploads: { uploads: 2, entities: 300 },
  feed: { entities: 2_000, batches: 5 },
  sync: { entities: 2_000 },
  oai: [1_000],
  refusals: { entities: 2_000 },
  abuseLatency: { records: 300, seconds: 1, largeMb: 1, v1Mb: 1 },
  scale: [2_000, 6_000],
  stream: { entities: 2_000, consumers: 5, commits: 5 },
  standby: { entities: 300, smoke: true },
};

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const compact = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

/** How one benchmark went: for the smoke run's summary. */
interface Ran {
  name: string;
  seconds: number;
  figures: number;
  error?: string;
}

/** Runs one benchmark; a failure becomes a missed figure (and the run goes on). */
async function section(name: string, figures: Figure[], ran: Ran[], work: () => Promise<Figure[]>): Promise<void> {
  const started = performance.now();
  process.stderr.write(`\n== bench: ${name} (load average ${loadavg()})\n`);
  let error: string | undefined;
  let count = 0;
  try {
    const result = await work();
    count = result.length;
    figures.push(...result);
  } catch (thrown) {
    process.stderr.write(`bench: ${name} failed: ${(thrown as Error).stack ?? thrown}\n`);
    error = String((thrown as Error).message ?? thrown).slice(0, 200);
    figures.push({ figure: `${name}: FAILED`, value: Number.NaN, unit: '', target: 'runs', met: false, note: error });
  }
  const seconds = (performance.now() - started) / 1000;
  ran.push({ name, seconds, figures: count, ...(error === undefined ? {} : { error }) });
  process.stderr.write(`== bench: ${name} took ${seconds.toFixed(0)} s\n`);
}

/** The smoke run's report: one line per benchmark, then `bench smoke: 10/10 ran in 75 s`. */
function printSmoke(ran: Ran[], elapsed: number): void {
  const width = Math.max(...ran.map((r) => r.name.length));
  for (const r of ran) {
    const outcome = r.error === undefined ? `ok      ${r.figures} figure(s)` : `FAILED  ${r.error}`;
    process.stdout.write(`${r.name.padEnd(width)}  ${r.seconds.toFixed(0).padStart(3)} s  ${outcome}\n`);
  }
  const ok = ran.filter((r) => r.error === undefined).length;
  process.stdout.write(
    `bench smoke: ${ok}/${ran.length} ran in ${elapsed.toFixed(0)} s${
      ok < ran.length
        ? `; FAILED: ${ran
            .filter((r) => r.error !== undefined)
            .map((r) => r.name)
            .join(', ')}`
        : ''
    }\n`,
  );
}

/** `bench: 9/11 targets met; ingest 100k in 71 s (2.4× COPY)`, from the largest ingest measured. */
export function headline(figures: Figure[]): string {
  const counted = figures.filter((figure) => !figure.info);
  const met = counted.filter((figure) => figure.met).length;
  const ingests = figures.filter((figure) => figure.figure.startsWith('ingest ') && figure.baseline !== undefined);
  const largest = ingests.at(-1);
  const size = largest && /^ingest ([\d,]+)/.exec(largest.figure)?.[1]?.replace(/,/g, '');
  const ingest =
    largest && size
      ? `; ingest ${compact(Number(size))} in ${largest.value.toFixed(largest.value >= 10 ? 0 : 1)} s (${(largest.value / largest.baseline!).toFixed(1)}× COPY)`
      : '';
  return `bench: ${met}/${counted.length} targets met${ingest}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      json: { type: 'string' },
      only: { type: 'string' },
    },
  });
  if (values.smoke && values.quick) throw new Error('--smoke and --quick: one or the other');
  const plan = values.smoke ? SMOKE : values.quick ? QUICK : FULL;
  const only = new Set((values.only?.split(',') ?? plan.sections) as Section[]);
  for (const name of only) if (!SECTIONS.includes(name)) throw new Error(`--only: one or more of ${SECTIONS.join(', ')}; got ${name}`);
  const mode = values.smoke ? 'smoke' : values.quick ? 'quick' : 'full';
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  process.stderr.write(
    `bench: ${mode} run on ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${loadBefore}\n`,
  );

  const figures: Figure[] = [];
  const ran: Ran[] = [];
  if (only.has('ingest')) {
    for (const { size, runs } of plan.ingest) {
      await section(`ingest ${compact(size)}`, figures, ran, async () => {
        const result = await ingestFigures([size], runs);
        if (runs === 1) for (const figure of result) figure.note = `${figure.note ? `${figure.note}; ` : ''}1 run (long)`;
        return result;
      });
    }
  }
  if (only.has('validate'))
    await section(`validation ${plan.validateMb} MB`, figures, ran, () => validationFigures(plan.validateMb, plan.runs));
  if (only.has('reads'))
    await section(`reads on ${compact(plan.reads.entities)}`, figures, ran, () => readsFigures({ ...plan.reads, runs: plan.runs }));
  if (only.has('export')) {
    await section(`export ${plan.export.map((e) => compact(e.size)).join(' + ')}`, figures, ran, async () => {
      const result = await exportFigures(
        plan.export.map((e) => e.size),
        plan.runs,
        { runsFor: (size) => plan.export.find((e) => e.size === size)?.runs ?? plan.runs },
      );
      for (const figure of result)
        if (/1 run$/.test(figure.note ?? '') || /^1 run;/.test(figure.note ?? '')) figure.note = `${figure.note} (long)`;
      return result;
    });
  }
  if (only.has('status'))
    await section(`status polling, ${plan.status.clients} clients`, figures, ran, () => statusPollingFigures(plan.status));

  if (only.has('interactive')) {
    await section(`interactive beside an import of ${compact(plan.interactive.entities)}`, figures, ran, () =>
      interactiveFigures(plan.interactive),
    );
  }
  if (only.has('uploads')) {
    await section(`${plan.uploads.uploads} uploads of ${compact(plan.uploads.entities)}`, figures, ran, () =>
      uploadFigures(plan.uploads.uploads, plan.uploads.entities),
    );
  }
  if (only.has('feed'))
    await section(`feed on ${compact(plan.feed.entities)}`, figures, ran, () => feedFigures(plan.feed.entities, plan.feed.batches));
  if (only.has('sync'))
    await section(`the client's first sync of ${compact(plan.sync.entities)}`, figures, ran, () => syncFigures(plan.sync.entities));
  if (only.has('refusals'))
    await section(`broad searches on ${compact(plan.refusals.entities)}`, figures, ran, () =>
      refusalFigures(plan.refusals.entities, plan.runs),
    );
  if (only.has('abuse-latency'))
    await section(`an ordinary client beside each attack, ${plan.abuseLatency.seconds} s each`, figures, ran, () =>
      abuseLatencyFigures(plan.abuseLatency),
    );
  if (only.has('oai')) await section(`OAI-PMH harvests of ${plan.oai.map(compact).join(' + ')}`, figures, ran, () => oaiFigures(plan.oai));
  if (only.has('scale'))
    await section(`the registry at ${plan.scale.map(compact).join(', ')} records`, figures, ran, () => scaleFigures(plan.scale));
  if (only.has('stream'))
    await section(`following ${compact(plan.stream.entities)} records with ${plan.stream.consumers} consumers`, figures, ran, () =>
      streamFigures(plan.stream.entities, plan.stream.consumers, plan.stream.commits),
    );
  if (only.has('standby'))
    await section(`reads on a hot standby after ${compact(plan.standby.entities)} imported`, figures, ran, () =>
      standbyFigures(plan.standby.entities, plan.standby.smoke),
    );

  const elapsed = (performance.now() - started) / 1000;
  if (values.smoke) {
    process.stdout.write(`\nbench: smoke run (no target judged); load average before ${loadBefore}, after ${loadavg()}\n`);
    printSmoke(ran, elapsed);
    if (ran.some((r) => r.error !== undefined)) process.exitCode = 1;
    return;
  }
  const loadAfter = loadavg();
  const line = headline(figures);
  process.stdout.write(`\nbench: ${mode} run, ${(elapsed / 60).toFixed(1)} min; load average before ${loadBefore}, after ${loadAfter}\n`);
  printTable(figures);
  if (values.json) {
    const machine = { cores: availableParallelism(), memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)) };
    writeFileSync(
      values.json,
      JSON.stringify(
        { mode, startedAt, elapsedSeconds: Math.round(elapsed), machine, loadBefore, loadAfter, headline: line, figures },
        null,
        2,
      ),
    );
  }
  process.stdout.write(`${line}\n`);
  if (figures.some((figure) => !figure.info && !figure.met)) process.exitCode = 1;
}

await main();
