// What following the registry costs: pages of the Activity Streams feed
// (/activity-stream) at the size of the registry, and the push stream
// (/api/v2/stream) with N consumers connected.
//
//   npm run bench:stream                              1,000,000 entities, 100 consumers
//   npm run bench:stream -- --entities 2000 --consumers 5 --commits 5     (smoke)
//   npm run bench:stream -- --database er_bench_scale_1000000 --loaded
//   (--database NAME: another scratch database; --keep: do not drop it;
//   --loaded: the database already holds its records (kept by an earlier
//   --keep run, or by bench:scale --keep): nothing is loaded, --entities is
//   ignored, the database is never dropped, and the push commits add
//   --commits records to it; --json FILE: the table as JSON too)
//
// N generated entities are loaded by the service's own write path (one
// activity each), unless --loaded; the stack starts (Temporal, workers, one
// API process).
// Pages: the first PAGES pages from `first` by `next`, then `last` and
// PAGES pages back by `prev`, each timed over HTTP; target p95 ≤ 50 ms.
// Push: C consumers open the stream; the API's RSS is read before and after
// they connect (per consumer: the difference over C); then COMMITS batches
// of one record are submitted one after another, and each consumer's receipt
// of each commit's event is timed from the commit's own time
// (transaction.created_at, the database's clock on this machine).

import { get as httpGet, type IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { batchXml, create } from '../test/support/batches.ts';
import { percentile, pollUntil } from '../test/support/poll.ts';
import { commandOptions, isScript, reportFigures } from './lib/cli.ts';
import { loadGeneratedEntities } from './lib/load.ts';
import type { Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, openDatabase, recreateDatabase, startStack } from './lib/stack.ts';

const DATABASE = 'er_bench_stream';
const PAGES = 50;
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` };

interface Link {
  id: string;
}

async function timedJson<T>(url: string, times: number[]): Promise<T> {
  const started = performance.now();
  const response = await fetch(url, { headers: AUTH });
  const body = (await response.json()) as T;
  times.push(performance.now() - started);
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`);
  return body;
}

/** Page times: forward from the first page, back from the last. */
async function pageTimes(apiUrl: string): Promise<{ times: number[]; totalItems: number }> {
  const times: number[] = [];
  const entry = await timedJson<{ first: Link; last: Link; totalItems: number }>(`${apiUrl}/activity-stream`, []);
  let url: string | undefined = entry.first.id;
  for (let page = 0; page < PAGES && url; page += 1) url = (await timedJson<{ next?: Link }>(url, times)).next?.id;
  url = entry.last.id;
  for (let page = 0; page < PAGES && url; page += 1) url = (await timedJson<{ prev?: Link }>(url, times)).prev?.id;
  return { times: times.sort((a, b) => a - b), totalItems: entry.totalItems };
}

/** One consumer: the time each event (by id) arrived. */
function openConsumer(apiUrl: string, arrivals: Map<string, number>[]): Promise<IncomingMessage> {
  const arrived = new Map<string, number>();
  arrivals.push(arrived);
  return new Promise((resolve, reject) => {
    httpGet(`${apiUrl}/api/v2/stream`, { headers: AUTH }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`stream: HTTP ${response.statusCode}`));
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
          const id = /^id: (.+)$/m.exec(text.slice(0, end))?.[1];
          if (id) arrived.set(id, Date.now());
          text = text.slice(end + 2);
        }
      });
      resolve(response);
    }).on('error', reject);
  });
}

function rssBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

/** The batch's transaction once committed, with its commit time in epoch ms. */
function committedTransaction(pool: pg.Pool, batchId: string): Promise<{ uuid: string; committed: number }> {
  return pollUntil(
    async () => {
      const { rows } = await pool.query<{ uuid: string; committed: string }>(
        `select uuid, extract(epoch from created_at) * 1000 as committed from transaction where batch_id = $1 and commit_seq is not null`,
        [batchId],
      );
      return rows[0] && { uuid: rows[0].uuid, committed: Number(rows[0].committed) };
    },
    { timeoutMs: 120_000, intervalMs: 20, what: `batch ${batchId} committed` },
  );
}

export async function streamFigures(
  entities: number,
  consumers: number,
  commits: number,
  options: { keep?: boolean; database?: string; loaded?: boolean } = {},
): Promise<Figure[]> {
  const name = options.database ?? DATABASE;
  const url = options.loaded ? await openDatabase(name) : await recreateDatabase(name);
  if (options.loaded) {
    entities = await entityCount(url);
    if (entities === 0) throw new Error(`--loaded: ${name} holds no records`);
    process.stderr.write(`stream: ${name} holds ${entities} entities\n`);
  } else {
    const loaded = await loadGeneratedEntities(url, entities);
    process.stderr.write(`stream: loaded ${entities} entities in ${loaded.seconds.toFixed(1)} s\n`);
  }
  const stack = await startStack(
    name,
    { OAI_PMH: 'bearer', STREAM_CONNECTIONS_PER_PRINCIPAL: '0', STREAM_CONNECTIONS_PER_ADDRESS: '0' },
    { reuseDatabase: true },
  );
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const responses: IncomingMessage[] = [];
  try {
    const pages = await pageTimes(stack.apiUrl);
    const before = rssBytes(stack.api.pid!);
    const arrivals: Map<string, number>[] = [];
    for (let index = 0; index < consumers; index += 1) responses.push(await openConsumer(stack.apiUrl, arrivals));
    const after = rssBytes(stack.api.pid!);

    const latencies: number[] = [];
    for (let commit = 0; commit < commits; commit += 1) {
      const submitted = await fetch(`${stack.apiUrl}/api/v2/batches`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/xml' },
        body: batchXml([create('n', `Bench stream ${commit} ${Date.now()}`)]),
      });
      if (submitted.status !== 200) throw new Error(`batch: HTTP ${submitted.status}`);
      const batchId = (await submitted.json()) as string;
      const { uuid, committed } = await committedTransaction(pool, batchId);
      await pollUntil(async () => (arrivals.every((arrived) => arrived.has(uuid)) ? true : undefined), {
        timeoutMs: 120_000,
        intervalMs: 5,
        what: `commit ${uuid} at every consumer`,
      });
      for (const arrived of arrivals) latencies.push(arrived.get(uuid)! - committed);
    }
    latencies.sort((a, b) => a - b);
    const label = entities.toLocaleString('en');
    return [
      {
        figure: `EMM page p95, ${label} entities`,
        value: percentile(pages.times, 95),
        unit: 'ms',
        target: '≤ 50 ms',
        met: percentile(pages.times, 95) <= 50,
        note: `${pages.times.length} pages from first and from last, ${pages.totalItems} activities`,
      },
      {
        figure: `push latency commit→event p50, ${consumers} consumers`,
        value: percentile(latencies, 50),
        unit: 'ms',
        target: 'reported',
        met: true,
        info: true,
        note: `${commits} commits`,
      },
      {
        figure: `push latency commit→event p95, ${consumers} consumers`,
        value: percentile(latencies, 95),
        unit: 'ms',
        target: 'reported',
        met: true,
        info: true,
      },
      {
        figure: 'API memory per connected consumer',
        value: (after - before) / consumers / 1024,
        unit: 'KB',
        target: 'reported',
        met: true,
        info: true,
        note: `RSS ${(before / 1048576).toFixed(0)} → ${(after / 1048576).toFixed(0)} MB`,
      },
    ];
  } finally {
    for (const response of responses) response.destroy();
    await pool.end();
    await stack.stop();
    // A loaded database is someone's kept one: never dropped here.
    if (!options.keep && !options.loaded)
      await dropDatabase(url).catch((error: Error) => console.error(`could not drop ${name}: ${error.message}`));
  }
}

async function entityCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('select count(*) as n from entity');
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

if (isScript(import.meta)) {
  const values = commandOptions(
    { entities: '1000000', consumers: '100', commits: '50', database: DATABASE },
    { optional: ['json'], flags: ['keep', 'loaded'] },
  );
  await reportFigures(values.json, () =>
    streamFigures(Number(values.entities), Number(values.consumers), Number(values.commits), {
      keep: values.keep,
      database: values.database,
      loaded: values.loaded,
    }),
  );
}
