// Benchmark of the snapshot export against PostgreSQL's own COPY.
//
//   npm run bench:export [-- --entities 100000 --runs 1 --validate --keep]
//   npm run bench:export -- --entities 100000,1000000
//   (--database NAME: another scratch database; --keep: do not drop it;
//   --cpu-prof DIR: a V8 CPU profile of each exporting child into DIR;
//   --loaded: a database kept by an earlier --keep run of the same single
//   size is measured as it is, without loading it again)
//
// Creates a scratch database (er_bench_export; one left by --keep is reused), fills `entity` with N
// records in a few set-based INSERT … SELECT FROM generate_series statements
// (a realistic record template, three parts of eight items, fresh UUIDs per
// row), then times, in the same run:
//  - the export path of the activity (services/exports/write.ts: binary COPY →
//    XML writer → SHA-256 → temporary file → fsync → rename), called directly
//    in a child process so that its peak RSS (maxRSS) is its own, with the
//    worker's Node flags (worker/node-flags.ts: its 8 MB semi-spaces change
//    the export's CPU by a fifth);
//  - `COPY (SELECT record FROM entity) TO STDOUT` through psql into /dev/null.
// Several sizes (comma-separated) are loaded and measured one after the
// other, and the peak RSS of the smallest and largest compared. Each is
// measured --runs times (medians). Targets: >= 20k entities/s, peak RSS
// <= 300 MB, RSS within 20% across sizes. Prints the table of
// bench/lib/report.ts; exits 1 when a target is missed. The database is
// dropped unless --keep. exportFigures() is what `npm run bench` calls.

import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { encodeCopyLoad, sendCopyLoad } from '../db/copy.ts';
import { storedDocument } from '../db/document-bytes.ts';
import { withDatabaseUser } from '../db/mikro-orm.config.ts';
import { ensureDatabase, migrate, openOrm } from '../db/orm.ts';
import type { EntityRecord } from '../domain/model.ts';
import { WORKER_NODE_FLAGS } from '../worker/node-flags.ts';
import { median, printTable, runsNote, type Figure } from './lib/report.ts';
import { dropDatabase } from './lib/stack.ts';

const DATABASE = 'er_bench_export';
const MB = 1024 * 1024;
// Rows generated, documented and copied at a time: the records of a chunk are held in the loader's memory.
const LOAD_CHUNK = 20_000;

// ---- data ----

// Placeholders replaced per row in SQL; numbers stay JSON numbers.
const TEMPLATE: EntityRecord = {
  entityId: -1,
  entityUuid: '@UUID@',
  entityType: 'PERSON_INDIVIDUAL',
  state: 'ERS_APPROVED',
  revision: {
    rev: '@REV@',
    metadataRev: '@MREV@',
    createdAt: '2025-03-04T12:00:00.000Z',
    user: { id: 'bench', name: 'Zkušební Uživatel' },
    participants: [{ role: 'EDITOR', lastChange: '2025-03-04T12:00:00.000Z', user: { id: 'bench', name: 'Zkušební Uživatel' } }],
  },
  parts: [
    {
      partUuid: '@P1@',
      type: 'PT_NAME',
      items: [
        { kind: 'string', type: 'NM_MAIN', value: '@SURNAME@' },
        { kind: 'string', type: 'NM_MINOR', value: '@FIRST@' },
        { kind: 'enum', type: 'NM_TYPE', spec: 'NT_ACTUAL' },
        { kind: 'string', type: 'NM_SUP_GEN', value: '@FIRST@ @SURNAME@ (@YEAR@)' },
        { kind: 'int', type: 'NM_ORDER', value: '@YEAR@' },
        { kind: 'boolean', type: 'NM_PREFERRED', value: true },
        { kind: 'unitDate', type: 'NM_VALID', from: '@YEAR@-01-01T00:00:00', to: '@YEAR@-12-31T23:59:59', format: 'Y' },
        { kind: 'link', type: 'SRC_LINK', url: 'https://example.cz/osoby/@N@', name: 'Záznam č. @N@' },
      ],
    },
    {
      partUuid: '@P2@',
      type: 'PT_BODY',
      items: [
        { kind: 'string', type: 'BRIEF_DESC', value: 'Český malíř a grafik, žák Akademie výtvarných umění v Praze.' },
        { kind: 'enum', type: 'GENDER', spec: 'GT_MALE' },
        { kind: 'string', type: 'NOTE', value: 'Poznámka k záznamu @N@: působil v obci @PLACE@ & okolí <Čechy>.' },
        { kind: 'int', type: 'SORT_KEY', value: '@N@' },
        { kind: 'boolean', type: 'IS_PUBLIC', value: false },
        { kind: 'string', type: 'HISTORY', value: 'Narodil se v obci @PLACE@, studoval v Praze a ve Vídni.' },
        { kind: 'string', type: 'SOURCE_INFO', value: 'Biografický slovník českých zemí.' },
        { kind: 'enum', type: 'LANGUAGE', spec: 'LNG_cze' },
      ],
    },
    {
      partUuid: '@P3@',
      type: 'PT_CRE',
      items: [
        { kind: 'unitDate', type: 'CRE_DATE', from: '@YEAR@-09-08T00:00:00', to: '@YEAR@-09-08T23:59:59', format: 'D' },
        { kind: 'enum', type: 'CRE_CLASS', spec: 'CRC_BIRTH' },
        { kind: 'string', type: 'CRE_PLACE', value: '@PLACE@' },
        { kind: 'binary', type: 'CRE_SCAN', base64: 'UEsDBBQAAAAIAGZ3TVcAAAAA' },
        { kind: 'int', type: 'CRE_YEAR', value: '@YEAR@' },
        { kind: 'boolean', type: 'CRE_CERTAIN', value: true },
        { kind: 'link', type: 'CRE_LINK', url: 'https://example.cz/matriky/@N@' },
        { kind: 'string', type: 'CRE_NOTE', value: 'Křest v kostele sv. Ondřeje.' },
      ],
    },
  ],
  issues: [],
};

const FIRST_NAMES = ['Antonín', 'Božena', 'Jiří', 'Květoslava', 'Přemysl', 'Šárka', 'Čeněk', 'Žofie', 'Ludmila', 'Vojtěch'];
const SURNAMES = ['Dvořák', 'Němcová', 'Čapek', 'Hašek', 'Štěpánek', 'Řezníček', 'Žižka', 'Kočí', 'Procházková', 'Veselý'];
const PLACES = ['Nelahozeves', 'Česká Skalice', 'Malé Svatoňovice', 'Lipnice nad Sázavou', 'Třeboň', 'Žďár nad Sázavou'];

const sqlArray = (values: string[]) => `array[${values.map((value) => `'${value}'`).join(', ')}]`;

const STAGED_COLUMNS = ['id', 'uuid', 'entity_type', 'state', 'rev', 'metadata_rev', 'last_seq', 'preferred_name', 'preferred_name_norm', 'description', 'record'];

/** One set-based statement per chunk into the staging table: every column but the document is computed by PostgreSQL. */
const STAGE_SQL = `
  insert into bench_stage (${STAGED_COLUMNS.join(', ')})
  select g, u, 'PERSON_INDIVIDUAL', 'ERS_APPROVED', rev, mrev, 1, surname, lower(surname), null,
    replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace($1::text,
      '"entityId":-1', '"entityId":' || g), '@UUID@', u::text), '@REV@', rev::text), '@MREV@', mrev::text),
      '@P1@', p1::text), '@P2@', p2::text), '@P3@', p3::text),
      '@SURNAME@', surname), '@FIRST@', first), '@PLACE@', place), '@YEAR@', (1800 + g % 200)::text), '@N@', g::text)::jsonb
  from (
    select g, gen_random_uuid() as u, gen_random_uuid() as rev, gen_random_uuid() as mrev,
      gen_random_uuid() as p1, gen_random_uuid() as p2, gen_random_uuid() as p3,
      (${sqlArray(SURNAMES)})[1 + (g * 7) % ${SURNAMES.length}] as surname,
      (${sqlArray(FIRST_NAMES)})[1 + g % ${FIRST_NAMES.length}] as first,
      (${sqlArray(PLACES)})[1 + g % ${PLACES.length}] as place
    from generate_series($2::bigint, $3::bigint) as g
  ) as s`;

/**
 * Loads the records as the write path leaves them: PostgreSQL generates each
 * chunk's rows into a staging table, and they go on into `entity` by COPY
 * with the stored v2 document that the write path computes beside each
 * record (db/apply/write-plan.ts), so the export reads what it reads in
 * service. A row is written once: no UPDATE leaves dead rows for the export
 * and COPY TO to scan.
 */
async function loadEntities(url: string, count: number): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const client = await pool.connect();
  try {
    await client.query('truncate entity, export_request cascade');
    await client.query('create temporary table bench_stage (like entity)');
    const template = JSON.stringify(TEMPLATE);
    for (let start = 1; start <= count; start += LOAD_CHUNK) {
      await client.query('truncate bench_stage');
      await client.query(STAGE_SQL, [template, start, Math.min(count, start + LOAD_CHUNK - 1)]);
      // Every column as text, the record too: it goes on as it came (COPY's text form) and is parsed only for its document.
      const { rows } = await client.query<Record<string, string | null>>(`select ${STAGED_COLUMNS.map((column) => `${column}::text`).join(', ')} from bench_stage order by id`);
      const withDocuments = rows.map((row) => [...STAGED_COLUMNS.map((column) => row[column]), storedDocument(JSON.parse(row.record!) as EntityRecord)]);
      await sendCopyLoad(client, encodeCopyLoad('entity', [...STAGED_COLUMNS, 'document_bytes'], withDocuments));
    }
    await client.query('vacuum analyze entity');
  } finally {
    client.release();
    await pool.end();
  }
}

async function requireLoaded(url: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('select count(*) as n from entity');
    if (Number(rows[0]?.n) !== count) throw new Error(`--loaded: the database holds ${rows[0]?.n} entities, not ${count}`);
  } finally {
    await client.end();
  }
}

// ---- measurement ----

interface ExportMeasurement {
  seconds: number;
  /** CPU time of the exporting process (user + system): what the export costs apart from waiting. */
  cpuSeconds: number;
  /** The part of cpuSeconds spent in the kernel (socket reads, file writes). */
  systemCpuSeconds: number;
  entities: number;
  bytes: number;
  peakRssBytes: number;
  file: string;
}

/** Child mode: one snapshot export of every record, timed, with this process's peak RSS. */
async function child(url: string, dir: string): Promise<void> {
  const { randomUUID } = await import('node:crypto');
  const { insertExport } = await import('../db/exports.ts');
  const { directoryExportStore } = await import('../services/exports/files.ts');
  const { writeExportFile } = await import('../services/exports/write.ts');
  const { openDb } = await import('../db/index.ts');
  const db = await openDb(url);
  const id = randomUUID();
  await insertExport(db.pool, { id, kind: 'snapshot', requestedIds: [], requestedBy: 'bench' });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const summary = await writeExportFile(db.exportRecords, directoryExportStore(dir), { id, kind: 'snapshot', requestedIds: [], fromSeq: null }, { attempt: 1 });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await db.close();
  const result: ExportMeasurement = {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    systemCpuSeconds: cpu.system / 1e6,
    entities: summary.entitiesWritten,
    bytes: summary.bytes,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    file: join(dir, summary.fileKey),
  };
  process.stdout.write(JSON.stringify(result));
}

function measureExport(url: string, dir: string, cpuProfileDir?: string): ExportMeasurement {
  const profiling = cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`];
  const run = spawnSync(process.execPath, [...WORKER_NODE_FLAGS, ...profiling, fileURLToPath(import.meta.url), '--child', url, dir], {
    encoding: 'utf8',
    maxBuffer: 16 * MB,
  });
  if (run.status !== 0) throw new Error(`export failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as ExportMeasurement;
}

function measureCopy(url: string): number {
  const devNull = openSync('/dev/null', 'w');
  try {
    const started = performance.now();
    const run = spawnSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', 'COPY (SELECT record FROM entity) TO STDOUT'], {
      stdio: ['ignore', devNull, 'pipe'],
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`psql COPY failed: ${run.stderr}`);
    return (performance.now() - started) / 1000;
  } finally {
    closeSync(devNull);
  }
}

/** The scratch database, created (or, left over from an earlier --keep run, reused) and migrated. */
async function scratchDatabase(name: string): Promise<string> {
  const url = new URL(withDatabaseUser(process.env.BENCH_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres'));
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  const orm = await openOrm(url.toString());
  await migrate(orm);
  await orm.close();
  return url.toString();
}

interface SizeResult {
  entities: number;
  exportSeconds: number[];
  exportCpuSeconds: number[];
  copySeconds: number[];
  bytes: number;
  peakRssBytes: number;
}

export interface ExportBenchOptions {
  /** Validate the first export file of each size against the v2 schema. */
  validate?: boolean;
  /** Keep the scratch database (a kept one is reused, reloaded per size). */
  keep?: boolean;
  database?: string;
  /** The kept database already holds the records of the (single) size: do not load them again. */
  loaded?: boolean;
  /** A directory for a V8 CPU profile of each exporting child. */
  cpuProfileDir?: string;
  /** Runs of one size, when not `runs` (the longest are measured once). */
  runsFor?: (entities: number) => number;
}

async function measureSizes(sizes: number[], runs: number, options: ExportBenchOptions): Promise<SizeResult[]> {
  const url = await scratchDatabase(options.database ?? DATABASE);
  const dir = mkdtempSync(join(tmpdir(), 'ers-bench-export-'));
  const results: SizeResult[] = [];
  try {
    for (const size of sizes) {
      if (options.loaded) await requireLoaded(url, size);
      else {
        const loadStarted = performance.now();
        await loadEntities(url, size);
        process.stderr.write(`export: loaded ${size} entities in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s\n`);
      }
      const result: SizeResult = { entities: size, exportSeconds: [], exportCpuSeconds: [], copySeconds: [], bytes: 0, peakRssBytes: 0 };
      // Alternate, so that both see the same cache state on average.
      for (let run = 0, runsOfSize = options.runsFor?.(size) ?? runs; run < runsOfSize; run += 1) {
        result.copySeconds.push(measureCopy(url));
        const measured = measureExport(url, dir, options.cpuProfileDir);
        if (measured.entities !== size) throw new Error(`export wrote ${measured.entities} entities, expected ${size}`);
        result.exportSeconds.push(measured.seconds);
        result.exportCpuSeconds.push(measured.cpuSeconds);
        result.bytes = measured.bytes;
        result.peakRssBytes = Math.max(result.peakRssBytes, measured.peakRssBytes);
        process.stderr.write(
          `export: ${size} entities: ${measured.seconds.toFixed(2)} s (CPU ${measured.cpuSeconds.toFixed(2)} s, of which system ${measured.systemCpuSeconds.toFixed(2)} s), COPY ${result.copySeconds.at(-1)!.toFixed(2)} s, peak RSS ${(measured.peakRssBytes / MB).toFixed(0)} MB\n`,
        );
        if (options.validate && run === 0) {
          const { validateDocument } = await import('../domain/validation/index.ts');
          const started = performance.now();
          await validateDocument(readFileSync(measured.file), 'v2');
          process.stderr.write(`export: file of ${size} entities is valid against the v2 schema (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
        }
        rmSync(measured.file, { force: true });
      }
      results.push(result);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (!options.keep) await dropDatabase(url).catch((error: Error) => console.error(`could not drop ${new URL(url).pathname.slice(1)}: ${error.message}; drop it by hand`));
  }
  return results;
}

/**
 * The snapshot export of each size (loaded one after the other), `runs`
 * times beside COPY TO (medians), its peak RSS, and with several sizes the
 * peak RSS of the largest against the smallest.
 */
export async function exportFigures(sizes: number[], runs: number, options: ExportBenchOptions = {}): Promise<Figure[]> {
  const results = await measureSizes(sizes, runs, options);
  const figures: Figure[] = [];
  for (const result of results) {
    const seconds = median(result.exportSeconds);
    const rate = result.entities / seconds;
    const label = result.entities.toLocaleString('en');
    figures.push(
      {
        figure: `snapshot export ${label} entities`,
        value: seconds,
        unit: 's',
        baseline: median(result.copySeconds),
        baselineName: 'COPY TO',
        // Issue 19: the export is held to the database's own pace, no more than 1.5× COPY TO of the same records.
        target: '≤ 1.5× COPY TO',
        met: seconds <= 1.5 * median(result.copySeconds),
        note: `${Math.round(rate)} entities/s, ${(result.bytes / MB).toFixed(0)} MB, exporter CPU ${median(result.exportCpuSeconds).toFixed(1)} s; ${runsNote(result.exportSeconds, 's')}`,
      },
      {
        figure: `export peak RSS, ${label} entities`,
        value: result.peakRssBytes / MB,
        unit: 'MB',
        target: '≤ 300 MB',
        met: result.peakRssBytes <= 300 * MB,
        note: result.exportSeconds.length > 1 ? `largest of ${result.exportSeconds.length} runs` : '1 run',
      },
    );
  }
  if (results.length > 1) {
    const small = results[0]!;
    const large = results.at(-1)!;
    const growth = large.peakRssBytes / small.peakRssBytes - 1;
    figures.push({
      figure: `export peak RSS, ${large.entities.toLocaleString('en')} vs ${small.entities.toLocaleString('en')}`,
      value: growth * 100,
      unit: '%',
      target: 'within ±20%',
      met: Math.abs(growth) <= 0.2,
    });
  }
  return figures;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      entities: { type: 'string', default: '100000' },
      runs: { type: 'string', default: '1' },
      validate: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      database: { type: 'string', default: DATABASE },
      loaded: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
    },
  });
  const sizes = values.entities.split(',').map((value) => Number(value.replace(/_/g, '')));
  if (sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Error(`--entities: positive integers, comma-separated; got ${values.entities}`);
  const figures = await exportFigures(sizes, Number(values.runs), {
    validate: values.validate,
    keep: values.keep,
    database: values.database,
    loaded: values.loaded,
    cpuProfileDir: values['cpu-prof'],
  });
  printTable(figures);
  if (figures.some((figure) => !figure.met)) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === '--child') await child(process.argv[3] as string, process.argv[4] as string);
  else await main();
}
