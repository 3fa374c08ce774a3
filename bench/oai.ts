// What a whole-registry OAI-PMH harvest costs, beside the snapshot export of
// the same records.
//
//   npm run bench:oai                                    100,000 entities
//   npm run bench:oai -- --entities 100000,1000000       both sizes, RSS compared
//   npm run bench:oai -- --entities 1000000 --database er_bench_scale_1000000 --loaded
//   (--database NAME: another scratch database; --keep: do not drop it;
//   --loaded: a database that already holds the single size, kept by an
//   earlier --keep run or by bench:scale --keep, is measured as it is and
//   never dropped; --json FILE: the table as JSON too)
//
// For each size: N generated entities are loaded by the service's own write
// path (bench/lib/load.ts: batches, transactions, revisions, stored
// documents); the snapshot export of every record is timed (the export
// activity's path, bench/export.ts); then the stack starts (Temporal, workers,
// one API process) and a harvester follows four whole lists through their
// resumption tokens over HTTP, one after the other: ListRecords in the native
// format (cam-2025), in oai_dc and in eac-cpf (EAC-CPF 2.0, reported beside
// the oai_dc harvest: both write each record anew from its JSON),
// ListIdentifiers. Each list is
// timed whole (every page read to its end) and page by page; the API's peak
// RSS (VmHWM) is read after the four. Targets: native ≤ 1.5× the export,
// oai_dc ≤ 3×, ListIdentifiers ≤ 1×, pages p95 ≤ 200 ms, and with several
// sizes the API's peak RSS within ±20% between the smallest and the largest.
// oaiFigures() is what `npm run bench` (and its smoke run) calls.

import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile } from '../test/support/poll.ts';
import { measureExport } from './export.ts';
import { commandOptions, isScript, reportFigures } from './lib/cli.ts';
import { loadGeneratedEntities } from './lib/load.ts';
import { median, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, openDatabase, peakRss, recreateDatabase, startStack } from './lib/stack.ts';

const DATABASE = 'er_bench_oai';
const MB = 1024 * 1024;

type ListRun = { name: string; query: string } & (
  | {
      /** The export of the same records times this is the target. */
      targetRatio: number;
    }
  | {
      /** Reported beside this list's harvest instead, with no target of its own. */
      against: string;
    }
);

const LISTS: readonly ListRun[] = [
  { name: 'ListRecords cam-2025', query: 'verb=ListRecords&metadataPrefix=cam-2025', targetRatio: 1.5 },
  { name: 'ListRecords oai_dc', query: 'verb=ListRecords&metadataPrefix=oai_dc', targetRatio: 3 },
  { name: 'ListRecords eac-cpf', query: 'verb=ListRecords&metadataPrefix=eac-cpf', against: 'ListRecords oai_dc' },
  { name: 'ListIdentifiers', query: 'verb=ListIdentifiers&metadataPrefix=oai_dc', targetRatio: 1 },
];

export interface HarvestTiming {
  seconds: number;
  pageMs: number[];
  headers: number;
  bytes: number;
}

/** A page as the harvester read it: its status, byte count, record headers and the tail that holds the token. */
interface PageRead {
  status: number;
  bytes: number;
  headers: number;
  tail: string;
}

const HEADER_TAG = Buffer.from('<header');
const TAIL_BYTES = 1024;

/**
 * Reads one page over a kept-alive connection as bytes: counts the record
 * headers and keeps the last kilobyte, where the token is. No text is
 * decoded and no body is kept whole, so the harvester's own CPU (fetch and a
 * 3 MB string per page cost about as much as the API's page) stays out of
 * the list's time; the bytes are all read, as a harvester reads them.
 */
function readPage(agent: Agent, url: string, headers: Record<string, string>): Promise<PageRead> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { agent, headers }, (response) => {
      const page: PageRead = { status: response.statusCode ?? 0, bytes: 0, headers: 0, tail: '' };
      let tail: Buffer = Buffer.alloc(0);
      response.on('data', (chunk: Buffer) => {
        page.bytes += chunk.length;
        // A tag split between two chunks is found in the joined edge of the two.
        const edge = Buffer.concat([
          tail.subarray(Math.max(0, tail.length - HEADER_TAG.length + 1)),
          chunk.subarray(0, HEADER_TAG.length - 1),
        ]);
        for (let at = edge.indexOf(HEADER_TAG); at !== -1; at = edge.indexOf(HEADER_TAG, at + 1)) page.headers += 1;
        for (let at = chunk.indexOf(HEADER_TAG); at !== -1; at = chunk.indexOf(HEADER_TAG, at + 1)) page.headers += 1;
        tail = chunk.length >= TAIL_BYTES ? chunk.subarray(chunk.length - TAIL_BYTES) : Buffer.concat([tail, chunk]).subarray(-TAIL_BYTES);
      });
      response.on('end', () => resolve({ ...page, tail: tail.toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/** One whole list, page by page through its tokens, as a harvester reads it; every page read to its end. */
export async function harvestList(apiUrl: string, query: string): Promise<HarvestTiming> {
  const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const timing: HarvestTiming = { seconds: 0, pageMs: [], headers: 0, bytes: 0 };
  const started = performance.now();
  let next: string | undefined = query;
  try {
    while (next !== undefined) {
      const pageStarted = performance.now();
      const page = await readPage(agent, `${apiUrl}/oai?${next}`, headers);
      timing.pageMs.push(performance.now() - pageStarted);
      if (page.status !== 200 || page.tail.includes('<error code='))
        throw new Error(`${next}: HTTP ${page.status}: ${page.tail.slice(-500)}`);
      timing.bytes += page.bytes;
      timing.headers += page.headers;
      // The token closes the list's element: read from the end, not by parsing megabytes.
      const token = /<resumptionToken[^>]*>([^<]*)<\/resumptionToken>/.exec(page.tail)?.[1];
      next = token ? `verb=${/verb=(\w+)/.exec(query)![1]}&resumptionToken=${encodeURIComponent(token)}` : undefined;
    }
  } finally {
    agent.destroy();
  }
  timing.seconds = (performance.now() - started) / 1000;
  return timing;
}

/** First pages and empty harvests: each must cost a page, never a pass of the registry (docs/decisions/0135). */
const PROBES: ReadonlyArray<{ name: string; query: string }> = [
  { name: 'first page', query: 'verb=ListIdentifiers&metadataPrefix=oai_dc' },
  { name: 'first page of a set', query: 'verb=ListRecords&metadataPrefix=cam-2025&set=type' },
  { name: 'first page from a day ago', query: `verb=ListIdentifiers&metadataPrefix=oai_dc&from=${daysAgo(1)}` },
  { name: 'empty: from the future', query: 'verb=ListIdentifiers&metadataPrefix=oai_dc&from=2999-01-01' },
  { name: 'empty: a set no record has', query: 'verb=ListIdentifiers&metadataPrefix=oai_dc&set=type:NO_SUCH_TYPE' },
];
/** Times each probe is asked; the slowest counts. */
const PROBE_TRIES = 5;

function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

/** The slowest of PROBE_TRIES answers of each probe, in ms. */
async function probeFirstPages(apiUrl: string): Promise<Map<string, number>> {
  const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const slowest = new Map<string, number>();
  try {
    for (const probe of PROBES) {
      for (let attempt = 0; attempt < PROBE_TRIES; attempt += 1) {
        const started = performance.now();
        const page = await readPage(agent, `${apiUrl}/oai?${probe.query}`, headers);
        const ms = performance.now() - started;
        if (page.status !== 200) throw new Error(`${probe.query}: HTTP ${page.status}: ${page.tail.slice(-500)}`);
        slowest.set(probe.name, Math.max(slowest.get(probe.name) ?? 0, ms));
      }
    }
  } finally {
    agent.destroy();
  }
  return slowest;
}

interface SizeResult {
  entities: number;
  exportSeconds: number;
  lists: Map<string, HarvestTiming>;
  probes: Map<string, number>;
  apiPeakRssBytes: number;
}

export interface OaiBenchOptions {
  database?: string;
  keep?: boolean;
  loaded?: boolean;
}

async function measureSize(entities: number, options: OaiBenchOptions): Promise<SizeResult> {
  const name = options.database ?? DATABASE;
  const url = options.loaded ? await openDatabase(name) : await recreateDatabase(name);
  if (!options.loaded) {
    const loaded = await loadGeneratedEntities(url, entities);
    process.stderr.write(`oai: loaded ${entities} entities in ${loaded.seconds.toFixed(1)} s\n`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ers-bench-oai-'));
  let exported;
  try {
    exported = measureExport(url, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (exported.entities !== entities) throw new Error(`the export wrote ${exported.entities} entities, expected ${entities}`);
  process.stderr.write(`oai: snapshot export of ${entities}: ${exported.seconds.toFixed(2)} s\n`);

  const stack = await startStack(name, { OAI_PMH: 'bearer' }, { reuseDatabase: true });
  const lists = new Map<string, HarvestTiming>();
  let apiPeakRssBytes: number;
  let probes: Map<string, number>;
  try {
    for (const list of LISTS) {
      const timing = await harvestList(stack.apiUrl, list.query);
      if (timing.headers !== entities) throw new Error(`${list.name} served ${timing.headers} headers, expected ${entities}`);
      lists.set(list.name, timing);
      process.stderr.write(
        `oai: ${list.name} of ${entities}: ${timing.seconds.toFixed(2)} s, ${timing.pageMs.length} pages, ${(timing.bytes / MB).toFixed(0)} MB\n`,
      );
    }
    probes = await probeFirstPages(stack.apiUrl);
    apiPeakRssBytes = peakRss(stack.api.pid!);
  } finally {
    await stack.stop();
    // A loaded database is someone's kept one: never dropped here.
    if (!options.keep && !options.loaded)
      await dropDatabase(url).catch((error: Error) => console.error(`could not drop ${name}: ${error.message}; drop it by hand`));
  }
  return { entities, exportSeconds: exported.seconds, lists, probes, apiPeakRssBytes };
}

/** The four harvests of each size beside its export, pages p95, the API's peak RSS, and with several sizes its growth. */
export async function oaiFigures(sizes: number[], options: OaiBenchOptions = {}): Promise<Figure[]> {
  const results: SizeResult[] = [];
  for (const size of sizes) results.push(await measureSize(size, options));
  const figures: Figure[] = [];
  for (const result of results) {
    const label = result.entities.toLocaleString('en');
    const pages: number[] = [];
    for (const list of LISTS) {
      const timing = result.lists.get(list.name)!;
      pages.push(...timing.pageMs);
      const note = `${Math.round(result.entities / timing.seconds)} records/s, ${timing.pageMs.length} pages (median ${median(timing.pageMs).toFixed(0)} ms), ${(timing.bytes / MB).toFixed(0)} MB`;
      if ('against' in list) {
        const against = result.lists.get(list.against)!;
        figures.push({
          figure: `OAI ${list.name}, ${label} entities`,
          value: timing.seconds,
          unit: 's',
          baseline: against.seconds,
          baselineName: list.against,
          target: 'reported',
          met: true,
          info: true,
          note: `${(timing.seconds / result.exportSeconds).toFixed(2)}× export; ${note}`,
        });
        continue;
      }
      figures.push({
        figure: `OAI ${list.name}, ${label} entities`,
        value: timing.seconds,
        unit: 's',
        baseline: result.exportSeconds,
        baselineName: 'snapshot export',
        target: `≤ ${list.targetRatio}× export`,
        met: timing.seconds <= list.targetRatio * result.exportSeconds,
        note,
      });
    }
    const sorted = pages.sort((a, b) => a - b);
    figures.push(
      {
        figure: `OAI pages p95, ${label} entities`,
        value: percentile(sorted, 95),
        unit: 'ms',
        target: '≤ 200 ms',
        met: percentile(sorted, 95) <= 200,
        note: `${sorted.length} pages of the four lists`,
      },
      {
        figure: `OAI first pages and empty harvests, slowest, ${label} entities`,
        value: Math.max(...result.probes.values()),
        unit: 'ms',
        target: '≤ 200 ms',
        met: Math.max(...result.probes.values()) <= 200,
        note: [...result.probes].map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`).join(', '),
      },
      {
        figure: `OAI API peak RSS, ${label} entities`,
        value: result.apiPeakRssBytes / MB,
        unit: 'MB',
        target: 'reported',
        met: true,
        info: true,
      },
    );
  }
  if (results.length > 1) {
    const small = results[0]!;
    const large = results.at(-1)!;
    const growth = large.apiPeakRssBytes / small.apiPeakRssBytes - 1;
    figures.push({
      figure: `OAI API peak RSS, ${large.entities.toLocaleString('en')} vs ${small.entities.toLocaleString('en')}`,
      value: growth * 100,
      unit: '%',
      target: 'within ±20%',
      met: Math.abs(growth) <= 0.2,
    });
  }
  return figures;
}

if (isScript(import.meta)) {
  const values = commandOptions({ entities: '100000', database: DATABASE }, { optional: ['json'], flags: ['keep', 'loaded'] });
  const sizes = values.entities.split(',').map((value) => Number(value.replace(/_/g, '')));
  if (sizes.some((size) => !Number.isInteger(size) || size < 1))
    throw new Error(`--entities: positive integers, comma-separated; got ${values.entities}`);
  if (values.loaded && sizes.length > 1) throw new Error('--loaded measures one size, as loaded');
  await reportFigures(values.json, () => oaiFigures(sizes, { database: values.database, keep: values.keep, loaded: values.loaded }));
}
