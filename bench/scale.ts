// What the registry's reads cost as it grows: the same figures at several
// sizes, and each figure's growth exponent against the size.
//
//   npm run bench:scale                                300,000, 1,000,000 and 3,000,000 records (hours; disk about 9 kB a record)
//   npm run bench:scale -- --entities 2000,6000        any sizes, smallest first (the smoke run's)
//   (--keep: leave the databases er_bench_scale_N; --json FILE: the table as JSON too;
//   --load-only: load and keep each size's database, measure nothing;
//   --loaded: measure a size's kept database when it holds exactly N records (and keep it), load it otherwise;
//   --runs R: measure each size R times, one after the other, each figure the median of the R with their range.
//   Loading needs no quiet machine, measuring does: load first, measure later.)
//
// For each size: N generated records with Zipf-like Czech names
// (bench/lib/zipf-names.ts: about 1 in 80 a Novák, 1 in 18 a Jan) are loaded
// through the write path's own COPY plan (bench/lib/load.ts, which ends with
// VACUUM ANALYZE); then, one after the other on a quiet stack (Temporal, two
// workers, one API process):
//  - bytes per record on disk, table by table (table, indexes and TOAST);
//  - the real client's first walk of the change feed from genesis, v1 pages
//    of 1,000 and v2 pages of 50,000 (bench/sync.ts), cold;
//  - an OAI-PMH harvest of ListRecords (cam-2025) through its tokens: its
//    first page, its page p95 and the whole list against the export;
//  - GET of a record, p50 and p95 over ids spread across the table;
//  - the real client's name searches, page and total
//    (bench/search-scale.ts);
//  - for GET and each search page, the database pages its statement reads
//    (EXPLAIN's buffers): its work, which must stay flat whatever the
//    memory holds, where its time also pays for reading those pages from
//    disk once the registry outgrows the memory;
//  - last, with the stack stopped, the snapshot export of every record (the
//    export activity's path).
// Then, for each figure and each pair of consecutive sizes, its growth
// exponent log(f2/f1) / log(n2/n1): a fixed answer (a page, a GET, a
// search page, bytes per record) must stay flat, exponent ≤ 0.1; a whole
// walk, harvest or export linear, ≤ 1.1. Exponents are judged only between
// sizes of 100,000 records and more: below that start-up and caches are
// most of every figure (the smoke run's sizes say whether it runs, not what
// it measures).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { percentile } from '../test/support/poll.ts';
import { CURRENT_READS } from '../db/records.ts';
import { measureExport } from './export.ts';
import { commandOptions, isScript, loadAverage, reportFigures } from './lib/cli.ts';
import { loadGeneratedEntities } from './lib/load.ts';
import { statementPages } from './lib/statement-pages.ts';
import type { Figure } from './lib/report.ts';
import { searchFiguresForScale } from './search-scale.ts';
import { BENCH_TOKEN, benchAdminUrl, dropDatabase, openDatabase, recreateDatabase, startStack, type Stack } from './lib/stack.ts';
import { ZIPF_NAMES } from './lib/zipf-names.ts';
import { harvestList } from './oai.ts';
import { query, READS_ENV } from './reads.ts';
import { walk } from './sync.ts';

const SCALE_SIZES = [300_000, 1_000_000, 3_000_000];

/** The tables whose bytes per record are reported (the rest are a few pages), and whether they grow with the records. */
const TABLES: Record<string, ScaleFigure['growth']> = {
  entity: 'flat',
  revision: 'flat',
  search_value: 'flat',
  name_word: 'flat',
  search_user_role: 'flat',
  entity_participant: 'flat',
  // A row per batch (of 10,000 records here), not per record.
  transaction: 'none',
  batch: 'none',
};
const GET_SAMPLES = 500;
const GET_PAGE_SAMPLES = 50;
const HARVEST = 'OAI ListRecords: whole harvest';
/** Sizes from which exponents are judged; below, fixed costs are most of every figure. */
const JUDGED_FROM = 100_000;
const FLAT = 0.1;
const LINEAR = 1.1;

interface ScaleFigure extends Figure {
  /** How it may grow with the registry: a fixed answer stays flat, a whole read grows linearly; 'none': no exponent. */
  growth: 'flat' | 'linear' | 'none';
}

interface SizeFigures {
  entities: number;
  figures: ScaleFigure[];
}

const name = (entities: number) => `er_bench_scale_${entities}`;
const sizeLabel = (entities: number) => entities.toLocaleString('en');

/** Bytes on disk (heap, indexes, TOAST) per record, table by table and in all. */
async function bytesPerRecord(url: string, entities: number): Promise<ScaleFigure[]> {
  const rows = await query<{ table: string; bytes: string }>(
    url,
    `select relname as table, pg_total_relation_size(oid) as bytes from pg_class
      where relnamespace = current_schema()::regnamespace and relname = any($1::text[])`,
    [Object.keys(TABLES)],
  );
  const [database] = await query<{ bytes: string }>(url, 'select pg_database_size(current_database()) as bytes');
  const figure = (label: string, bytes: number, growth: ScaleFigure['growth'] = 'flat'): ScaleFigure => ({
    figure: `bytes per record: ${label}`,
    value: bytes / entities,
    unit: 'B',
    target: 'reported',
    met: true,
    info: true,
    growth,
  });
  return [
    ...Object.entries(TABLES).map(([table, growth]) => figure(table, Number(rows.find((row) => row.table === table)?.bytes ?? 0), growth)),
    figure('whole database', Number(database!.bytes)),
  ];
}

/** Ids spread over the table: a fixed stride, co-prime with any span worth measuring, every sample another page of it. */
async function sampleIds(url: string, samples: number): Promise<number[]> {
  const [range] = await query<{ min: string; max: string }>(url, 'select min(id) as min, max(id) as max from entity');
  const min = Number(range!.min);
  const span = Number(range!.max) - min + 1;
  return Array.from({ length: samples }, (_, k) => min + ((k * 7919) % span));
}

/** GET of records spread over the table, one after another: latencies in ms. */
async function getLatencies(apiUrl: string, url: string): Promise<number[]> {
  const latencies: number[] = [];
  for (const id of await sampleIds(url, GET_SAMPLES)) {
    const started = performance.now();
    const response = await fetch(`${apiUrl}/api/v2/entities/${id}`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET ${id}: ${response.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies.sort((a, b) => a - b);
}

/** The pages GET's own statement reads for one record (db/records.ts), the mean over records spread over the table. */
async function getPages(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const ids = await sampleIds(url, GET_PAGE_SAMPLES);
    let pages = 0;
    for (const id of ids)
      pages += (await statementPages(client, { text: CURRENT_READS['documents-ids'].text, values: [[String(id)]] })).pages;
    return pages / ids.length;
  } finally {
    await client.end();
  }
}

async function readFigures(stack: Stack, entities: number): Promise<ScaleFigure[]> {
  const figures: ScaleFigure[] = [];
  const timed = (figure: string, value: number, unit: string, growth: ScaleFigure['growth'], note?: string): ScaleFigure => ({
    figure,
    value,
    unit,
    target: growth === 'flat' ? `exponent ≤ ${FLAT}` : `exponent ≤ ${LINEAR}`,
    met: true,
    info: true,
    growth,
    ...(note === undefined ? {} : { note }),
  });
  for (const [version, pageSize] of [
    ['v1', 1000],
    ['v2', 50_000],
  ] as const) {
    // Cold: the walk lays its range out itself.
    await query(stack.databaseUrl, 'delete from feed_range');
    const first = await walk(stack.apiUrl, version, pageSize);
    if (first.records !== entities) throw new Error(`the ${version} walk listed ${first.records} of ${entities} records`);
    const pages = [...first.pages].sort((a, b) => a - b);
    figures.push(
      timed(`first walk ${version}, pages of ${pageSize.toLocaleString('en')}`, first.seconds, 's', 'linear', `${pages.length} pages`),
      timed(`first walk ${version}: page p95`, percentile(pages, 95), 'ms', 'flat'),
    );
  }
  const harvest = await harvestList(stack.apiUrl, 'verb=ListRecords&metadataPrefix=cam-2025');
  if (harvest.headers !== entities) throw new Error(`the harvest listed ${harvest.headers} of ${entities} records`);
  const pages = [...harvest.pageMs].sort((a, b) => a - b);
  figures.push(
    timed('OAI ListRecords: first page', harvest.pageMs[0]!, 'ms', 'flat'),
    timed('OAI ListRecords: page p95', percentile(pages, 95), 'ms', 'flat', `${pages.length} pages`),
    timed(HARVEST, harvest.seconds, 's', 'linear'),
  );
  const gets = await getLatencies(stack.apiUrl, stack.databaseUrl);
  figures.push(
    timed('GET entity p50', percentile(gets, 50), 'ms', 'flat'),
    timed('GET entity p95', percentile(gets, 95), 'ms', 'flat'),
    timed('GET entity reads', await getPages(stack.databaseUrl), 'pages', 'flat', 'its statement, the mean over 50 records'),
  );
  return figures;
}

/** The size's kept database when it holds exactly `entities` records, else undefined. */
async function keptDatabase(entities: number): Promise<string | undefined> {
  const exists = await query<{ found: boolean }>(benchAdminUrl(), 'select exists (select from pg_database where datname = $1) as found', [
    name(entities),
  ]);
  if (!exists[0]?.found) return undefined;
  const url = await openDatabase(name(entities));
  const [row] = await query<{ records: string }>(url, 'select count(*) as records from entity');
  return Number(row?.records) === entities ? url : undefined;
}

async function loadSize(entities: number): Promise<string> {
  const url = await recreateDatabase(name(entities));
  const started = performance.now();
  const loaded = await loadGeneratedEntities(url, entities, {
    chunkSize: Math.min(10_000, entities),
    names: ZIPF_NAMES,
    onProgress: (done, total) => {
      if (done === total || done % Math.max(10_000, Math.round(total / 10 / 10_000) * 10_000) === 0)
        process.stderr.write(`scale: loaded ${done.toLocaleString('en')} / ${total.toLocaleString('en')}\n`);
    },
  });
  process.stderr.write(
    `scale: ${sizeLabel(entities)} records loaded in ${((performance.now() - started) / 1000).toFixed(0)} s (${loaded.indexSeconds.toFixed(0)} s indexes and VACUUM ANALYZE); load average ${loadAverage()}\n`,
  );
  return url;
}

/** Seconds to export every record of the size's database. */
function exportFigure(url: string, entities: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'scale-export-'));
  try {
    const exported = measureExport(url, dir);
    if (exported.entities !== entities) throw new Error(`the export wrote ${exported.entities} of ${entities} records`);
    return exported.seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureSize(entities: number, options: ScaleOptions): Promise<SizeFigures> {
  const database = name(entities);
  const kept = options.loaded ? await keptDatabase(entities) : undefined;
  if (kept) process.stderr.write(`scale: measuring the kept ${database}; load average ${loadAverage()}\n`);
  const url = kept ?? (await loadSize(entities));
  // A kept database took hours to load: only one this run loaded is dropped (unless --keep).
  const keep = (options.keep ?? false) || kept !== undefined;
  const bytes = await bytesPerRecord(url, entities);
  const runs: ScaleFigure[][] = [];
  try {
    for (let run = 1; run <= (options.runs ?? 1); run += 1) {
      if (run > 1) process.stderr.write(`scale: run ${run} of ${options.runs} on ${database}; load average ${loadAverage()}\n`);
      runs.push(await measureOnce(database, url, entities));
    }
  } finally {
    if (!keep) await dropDatabase(url);
  }
  const figures = [...bytes, ...medians(runs)];
  for (const figure of figures) figure.figure = `${figure.figure}, ${sizeLabel(entities)}`;
  return { entities, figures };
}

/**
 * Each figure of several runs as the run with its median value (the upper of the two middle ones for an even count),
 * its verdict and note with it, every run's value in the note: runs of one size differ by up to 40% on one machine.
 */
function medians(runs: readonly ScaleFigure[][]): ScaleFigure[] {
  if (runs.length === 1) return runs[0]!;
  return runs[0]!.map(({ figure }) => {
    const measured = runs.map((run) => run.find((each) => each.figure === figure)!).sort((a, b) => a.value - b.value);
    const median = measured[Math.floor(measured.length / 2)]!;
    const values = `median of ${measured.length} runs (${measured.map((each) => each.value.toPrecision(3)).join(', ')})`;
    return { ...median, note: median.note === undefined ? values : `${values}; ${median.note}` };
  });
}

/** One measurement of a loaded size: the reads on a stack of their own, then the export with the stack stopped. */
async function measureOnce(database: string, url: string, entities: number): Promise<ScaleFigure[]> {
  const figures: ScaleFigure[] = [];
  // The reads first, on the registry as loaded; the export last. Measured after the export, which reads
  // every table and writes its file, the walks paid for it (about 12 s of a first walk at 3,000,000).
  // Summaries from 1,000 records on: a small registry walks in pages too.
  const stack = await startStack(database, { ...READS_ENV, UPDATES_FROM_MAX: '1000' }, { reuseDatabase: true });
  try {
    figures.push(...(await readFigures(stack, entities)));
    // The real client's name searches, page and total, on this size's database (bench/search-scale.ts).
    figures.push(...(await searchFiguresForScale(stack.databaseUrl)));
  } finally {
    await stack.stop();
  }
  const exportSeconds = exportFigure(url, entities);
  figures.push({
    figure: 'snapshot export',
    value: exportSeconds,
    unit: 's',
    target: `exponent ≤ ${LINEAR}`,
    met: true,
    info: true,
    growth: 'linear',
  });
  const harvest = figures.find((figure) => figure.figure === HARVEST)!;
  harvest.note = `${(harvest.value / exportSeconds).toFixed(2)}× the export`;
  return figures;
}

/** log(f2/f1) / log(n2/n1) for every figure measured at both sizes. */
function exponents(small: SizeFigures, large: SizeFigures): Figure[] {
  const base = (figure: Figure, entities: number) => figure.figure.slice(0, -`, ${sizeLabel(entities)}`.length);
  const judged = small.entities >= JUDGED_FROM;
  const found: Figure[] = [];
  for (const figure of large.figures) {
    const label = base(figure, large.entities);
    const before = small.figures.find((candidate) => base(candidate, small.entities) === label);
    if (figure.growth === 'none' || !before || before.value <= 0 || figure.value <= 0) continue;
    const exponent = Math.log(figure.value / before.value) / Math.log(large.entities / small.entities);
    const bound = figure.growth === 'flat' ? FLAT : LINEAR;
    found.push({
      figure: `growth of ${label}, ${sizeLabel(small.entities)} → ${sizeLabel(large.entities)}`,
      value: exponent,
      unit: '',
      target: `≤ ${bound}`,
      met: !judged || exponent <= bound,
      ...(judged ? {} : { info: true, note: `not judged below ${sizeLabel(JUDGED_FROM)} records` }),
    });
  }
  return found;
}

interface ScaleOptions {
  keep?: boolean;
  loaded?: boolean;
  /** Measurements of each size, one after the other; each figure is their median. */
  runs?: number;
}

export async function scaleFigures(sizes: readonly number[], options: ScaleOptions = {}): Promise<Figure[]> {
  const measured: SizeFigures[] = [];
  for (const entities of sizes) {
    process.stderr.write(`scale: ${sizeLabel(entities)} records; load average ${loadAverage()}\n`);
    measured.push(await measureSize(entities, options));
  }
  const figures: Figure[] = measured.flatMap((size) => size.figures);
  for (let index = 1; index < measured.length; index += 1) figures.push(...exponents(measured[index - 1]!, measured[index]!));
  return figures;
}

if (isScript(import.meta)) {
  const values = commandOptions(
    { entities: SCALE_SIZES.join(','), runs: '1' },
    { optional: ['json'], flags: ['keep', 'loaded', 'load-only'] },
  );
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: a positive integer; got ${values.runs}`);
  const sizes = values.entities.split(',').map((value) => Number(value.replace(/_/g, '')));
  if (sizes.some((size) => !Number.isInteger(size) || size < 1) || sizes.some((size, index) => index > 0 && size <= sizes[index - 1]!))
    throw new Error(`--entities: positive integers, comma-separated, smallest first; got ${values.entities}`);
  if (values['load-only']) {
    for (const entities of sizes) if (!(await keptDatabase(entities))) await loadSize(entities);
  } else {
    await reportFigures(values.json, () => scaleFigures(sizes, { keep: values.keep, loaded: values.loaded, runs }));
  }
}
