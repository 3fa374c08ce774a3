// The real client's first walk of the change feed, from the genesis
// transaction to the end, as it runs it, against one pass of PostgreSQL over
// the same records:
//
//  - v1 at pageSize 1000: GET /api/v1/updates/from/{genesis} (a summary:
//    too many to list), then GET /api/v1/updates pages 1, 2, … in order until
//    a short page or the summary's count is reached;
//  - v2 at pageSize 50,000, the same way;
//  - the baseline: COPY TO of the plain query of the whole range (every
//    record once with its latest revision, sorted by entity id), unpaged.
//
// Each walk starts cold (no kept range layouts), so it includes the one pass
// that lays its range out. Reported: the walk's time and its ratio to the
// baseline, page p50/p95, the CPU PostgreSQL's processes spent in the walk
// (from /proc: the whole server's, ended backends included, so run it quiet).
//
//   npm run bench:sync                        1,000,000 records (the reads benchmark's database, loaded once and kept)
//   npm run bench:sync -- --entities 20000    a smaller database of its own
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { GENESIS_TRANSACTION_ID } from '../migrations/Migration20261123000005Genesis.ts';
import { median, printTable, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, startStack } from './lib/stack.ts';
import { readsDatabase, READS_ENV } from './reads.ts';

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) PostgreSQL's server has spent: its processes'
 * own, and what the postmaster collected of its children that ended (a
 * backend that closed meanwhile still counts).
 */
function postgresCpuSeconds(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
      const parent = readFileSync(`/proc/${fields[1]}/stat`, 'utf8');
      const isPostmaster = parent.slice(parent.indexOf('(') + 1, parent.lastIndexOf(')')) !== 'postgres';
      if (isPostmaster) ticks += Number(fields[13]) + Number(fields[14]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

export interface Walk {
  seconds: number;
  pages: number[];
  records: number;
  postgresCpu: number;
}

/** The client's walk from genesis at `pageSize`, timed page by page. */
export async function walk(apiUrl: string, version: 'v1' | 'v2', pageSize: number): Promise<Walk> {
  const get = async (path: string) => {
    const response = await fetch(`${apiUrl}/api/${version}${path}`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`);
    return text;
  };
  const listed = (xml: string) => xml.split(version === 'v1' ? '<ri ' : '<revInfo ').length - 1;
  const cpuBefore = postgresCpuSeconds();
  const started = performance.now();
  const summary = await get(`/updates/from/${GENESIS_TRANSACTION_ID}`);
  const to = /<to>([^<]+)<\/to>/.exec(summary)![1]!;
  let remaining = Number(/<(?:cnt|count)>(\d+)<\/(?:cnt|count)>/.exec(summary)![1]);
  const total = remaining;
  const pages: number[] = [];
  for (let page = 1; remaining > 0; page += 1) {
    const pageStarted = performance.now();
    const count = listed(await get(`/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${to}&page=${page}&pageSize=${pageSize}`));
    pages.push(performance.now() - pageStarted);
    remaining -= count;
    if (count < pageSize) break;
  }
  const seconds = (performance.now() - started) / 1000;
  if (remaining !== 0) throw new Error(`the walk listed ${total - remaining} of ${total} records`);
  return { seconds, pages, records: total, postgresCpu: postgresCpuSeconds() - cpuBefore };
}

/** One pass: COPY TO of the whole range's plain query, its rows read and dropped. */
async function onePass(pool: pg.Pool): Promise<{ seconds: number; postgresCpu: number }> {
  const client = await pool.connect();
  try {
    const cpuBefore = postgresCpuSeconds();
    const started = performance.now();
    const stream = client.query(
      copyTo(`copy (select distinct on (r.entity_id) r.entity_id, e.uuid, r.rev, r.metadata_rev
                 from transaction t join revision r on r.seq = t.seq join entity e on e.id = r.entity_id
                where t.commit_seq > (select commit_seq from transaction where uuid = '${GENESIS_TRANSACTION_ID}')
                order by r.entity_id, r.seq desc) to stdout`),
    );
    for await (const _chunk of stream) {
      // Read and dropped.
    }
    return { seconds: (performance.now() - started) / 1000, postgresCpu: postgresCpuSeconds() - cpuBefore };
  } finally {
    client.release();
  }
}

export async function syncFigures(entities: number, runs = 1): Promise<Figure[]> {
  const database = await readsDatabase(entities);
  // Summaries from 1,000 records on: a small database walks in pages too.
  const stack = await startStack(database.name, { ...READS_ENV, UPDATES_FROM_MAX: '1000' }, { reuseDatabase: true });
  const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
  try {
    const baseline: { seconds: number; postgresCpu: number }[] = [];
    const walks: Record<'v1' | 'v2', Walk[]> = { v1: [], v2: [] };
    for (let run = 0; run < runs; run += 1) {
      baseline.push(await onePass(pool));
      for (const [version, pageSize] of [
        ['v1', 1000],
        ['v2', 50_000],
      ] as const) {
        // Cold: the walk lays its range out itself.
        await pool.query('delete from feed_range');
        walks[version].push(await walk(stack.apiUrl, version, pageSize));
      }
    }
    const pass = median(baseline.map((b) => b.seconds));
    const note = `${database.how}; load average ${loadavg()}`;
    const figures: Figure[] = [
      {
        figure: `one pass over ${entities.toLocaleString('en')} records (COPY TO)`,
        value: pass,
        unit: 's',
        target: 'baseline',
        met: true,
        info: true,
        note: `PostgreSQL CPU ${median(baseline.map((b) => b.postgresCpu)).toFixed(1)} s`,
      },
    ];
    for (const [version, pageSize, ratioTarget] of [
      ['v1', 1000, 5],
      ['v2', 50_000, 2],
    ] as const) {
      const seconds = median(walks[version].map((w) => w.seconds));
      const pages = walks[version].flatMap((w) => w.pages);
      const inOrder = walks[version].flatMap((w) => w.pages.slice(1));
      const p95 = percentile(inOrder.length > 0 ? inOrder : pages, 95);
      figures.push({
        figure: `${version} walk from genesis, pages of ${pageSize.toLocaleString('en')}`,
        value: seconds,
        unit: 's',
        baseline: pass,
        baselineName: 'one pass',
        target: `≤ ${ratioTarget}× one pass`,
        met: seconds <= ratioTarget * pass,
        note: `${pages.length / walks[version].length} pages, page p50 ${percentile(pages, 50).toFixed(1)} ms, p95 ${percentile(pages, 95).toFixed(1)} ms, first page ${walks[version][0]!.pages[0]!.toFixed(0)} ms; PostgreSQL CPU ${median(walks[version].map((w) => w.postgresCpu)).toFixed(1)} s; ${note}`,
      });
      if (version === 'v1') {
        figures.push({
          figure: `v1 page of 1,000 reached in order, p95`,
          value: p95,
          unit: 'ms',
          target: '≤ 50 ms',
          met: p95 <= 50,
          note: `pages 2…${pages.length / walks[version].length}`,
        });
      }
    }
    return figures;
  } finally {
    await pool.end();
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { entities: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '1' } } });
  const figures = await syncFigures(Number(values.entities), Number(values.runs));
  printTable(figures);
  process.exit(figures.every((figure) => figure.met) ? 0 : 1);
}
