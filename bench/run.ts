// The whole benchmark suite in one run, every figure beside its baseline.
//
//   npm run bench                 full sizes (about 25 min on 2 cores with the read database kept, 40 without)
//   npm run bench -- --quick      small sizes, within about 5 minutes (3-4 min measured)
//   npm run bench -- --json FILE  also writes the table (and the machine's load) as JSON
//   npm run bench -- --only ingest,reads   a subset (ingest, validate, reads, export, status, interactive)
//
// Each timed figure is measured 3 times (median; the note gives the spread
// (max - min) / median), except the longest ones of the full run (ingest of
// 100,000 and the export of 1,000,000 entities: once, as the note says).
// Prints one table (bench/lib/report.ts) and, as its last line, a headline:
// `bench: 9/11 targets met; ingest 100k in 71 s (2.4× COPY)`. Exits 1 when a
// target is missed or a benchmark failed.

import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { exportFigures } from './export.ts';
import { ingestFigures } from './ingest.ts';
import { interactiveFigures } from './interactive.ts';
import { printTable, type Figure } from './lib/report.ts';
import { readsFigures } from './reads.ts';
import { statusPollingFigures, type StatusPollingOptions } from './status-polling.ts';
import { validationFigures } from './validate.ts';

interface Plan {
  ingest: { size: number; runs: number }[];
  validateMb: number;
  reads: { entities: number; durationSeconds: number; ids: number; searchRequests: number; searchSeconds: number };
  export: { size: number; runs: number }[];
  status: StatusPollingOptions;
  /** One-entity batches submitted one after another while an import of `entities` is applied. */
  interactive: { entities: number; saves: number };
}

const RUNS = 3;

const FULL: Plan = {
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
};

const QUICK: Plan = {
  ingest: [
    { size: 1_000, runs: RUNS },
    { size: 10_000, runs: RUNS },
  ],
  validateMb: 10,
  reads: { entities: 100_000, durationSeconds: 5, ids: 2000, searchRequests: 60, searchSeconds: 20 },
  export: [{ size: 10_000, runs: RUNS }],
  status: { clients: 50, durationSeconds: 3, runs: 1 },
  interactive: { entities: 20_000, saves: 20 },
};

const SECTIONS = ['ingest', 'validate', 'reads', 'export', 'status', 'interactive'] as const;
type Section = (typeof SECTIONS)[number];

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const compact = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

/** Runs one benchmark; a failure becomes a missed figure (and the run goes on). */
async function section(name: string, figures: Figure[], work: () => Promise<Figure[]>): Promise<void> {
  const started = performance.now();
  process.stderr.write(`\n== bench: ${name} (load average ${loadavg()})\n`);
  try {
    figures.push(...(await work()));
  } catch (error) {
    process.stderr.write(`bench: ${name} failed: ${(error as Error).stack ?? error}\n`);
    figures.push({ figure: `${name}: FAILED`, value: Number.NaN, unit: '', target: 'runs', met: false, note: String((error as Error).message ?? error).slice(0, 200) });
  }
  process.stderr.write(`== bench: ${name} took ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
}

/** `bench: 9/11 targets met; ingest 100k in 71 s (2.4× COPY)`, from the largest ingest measured. */
export function headline(figures: Figure[]): string {
  const counted = figures.filter((figure) => !figure.info);
  const met = counted.filter((figure) => figure.met).length;
  const ingests = figures.filter((figure) => figure.figure.startsWith('ingest ') && figure.baseline !== undefined);
  const largest = ingests.at(-1);
  const size = largest && /^ingest ([\d,]+)/.exec(largest.figure)?.[1]?.replace(/,/g, '');
  const ingest = largest && size ? `; ingest ${compact(Number(size))} in ${largest.value.toFixed(largest.value >= 10 ? 0 : 1)} s (${(largest.value / largest.baseline!).toFixed(1)}× COPY)` : '';
  return `bench: ${met}/${counted.length} targets met${ingest}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const plan = values.quick ? QUICK : FULL;
  const only = new Set((values.only?.split(',') ?? SECTIONS) as Section[]);
  for (const name of only) if (!SECTIONS.includes(name)) throw new Error(`--only: one or more of ${SECTIONS.join(', ')}; got ${name}`);
  const mode = values.quick ? 'quick' : 'full';
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  process.stderr.write(`bench: ${mode} run on ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load average ${loadBefore}\n`);

  const figures: Figure[] = [];
  if (only.has('ingest')) {
    for (const { size, runs } of plan.ingest) {
      await section(`ingest ${compact(size)}`, figures, async () => {
        const result = await ingestFigures([size], runs);
        if (runs === 1) for (const figure of result) figure.note = `${figure.note ? `${figure.note}; ` : ''}1 run (long)`;
        return result;
      });
    }
  }
  if (only.has('validate')) await section(`validation ${plan.validateMb} MB`, figures, () => validationFigures(plan.validateMb, RUNS));
  if (only.has('reads')) await section(`reads on ${compact(plan.reads.entities)}`, figures, () => readsFigures({ ...plan.reads, runs: RUNS }));
  if (only.has('export')) {
    await section(`export ${plan.export.map((e) => compact(e.size)).join(' + ')}`, figures, async () => {
      const result = await exportFigures(
        plan.export.map((e) => e.size),
        RUNS,
        { runsFor: (size) => plan.export.find((e) => e.size === size)?.runs ?? RUNS },
      );
      for (const figure of result) if (/1 run$/.test(figure.note ?? '') || /^1 run;/.test(figure.note ?? '')) figure.note = `${figure.note} (long)`;
      return result;
    });
  }
  if (only.has('status')) await section(`status polling, ${plan.status.clients} clients`, figures, () => statusPollingFigures(plan.status));

  if (only.has('interactive')) {
    await section(`interactive beside an import of ${compact(plan.interactive.entities)}`, figures, () => interactiveFigures(plan.interactive));
  }

  const elapsed = (performance.now() - started) / 1000;
  const loadAfter = loadavg();
  const line = headline(figures);
  process.stdout.write(`\nbench: ${mode} run, ${(elapsed / 60).toFixed(1)} min; load average before ${loadBefore}, after ${loadAfter}\n`);
  printTable(figures);
  if (values.json) {
    const machine = { cores: availableParallelism(), memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)) };
    writeFileSync(values.json, JSON.stringify({ mode, startedAt, elapsedSeconds: Math.round(elapsed), machine, loadBefore, loadAfter, headline: line, figures }, null, 2));
  }
  process.stdout.write(`${line}\n`);
  if (figures.some((figure) => !figure.info && !figure.met)) process.exitCode = 1;
}

await main();
