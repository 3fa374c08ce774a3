// Reads on a PostgreSQL hot standby (docs/decisions/0192) against the same
// reads on the primary, the replication lag an import leaves, and how long a
// standby takes to leave and rejoin the read rotation.
//
//   npm run bench:standby                      100,000 entities
//   npm run bench:standby -- --smoke-size 300  a tiny run: does it still run? (no target judged)
//   (--json FILE: the table as JSON too)
//
// A primary of the benchmark's own and one streaming standby of it
// (test/support/standby.ts) run on this machine: the ratio shows what the
// standby path costs (the routing's probe, a second server sharing the same
// cores and disk), not capacity added. Steps:
// 1. N generated entities are imported by the service's write path
//    (bench/lib/load.ts) while pg_stat_replication is read every 100 ms: the
//    standby's replay lag (time and bytes) during the import.
// 2. A stack reading from the standby, then one without it: each walks the
//    whole v2 feed (pages of 10,000) and harvests ListIdentifiers whole
//    (median of 3, 1 in a smoke run).
// 3. This process's own read routing (the code of every API process) watches
//    the standby with REPLICA_MAX_LAG 2 s: the time from the standby's stop
//    until it leaves the rotation and from its start until it is back, then
//    the same with replay paused (a lagging standby) and resumed.

import { Agent, get as httpGet } from 'node:http';
import { openDb } from '../db/index.ts';
import { GENESIS_TRANSACTION_ID } from '../migrations/Migration20261123000005Genesis.ts';
import { percentile, pollUntil, sleep } from '../test/support/poll.ts';
import { standbysUnavailable, startPrimary, startStandby, type Cluster } from '../test/support/standby.ts';
import { commandOptions, isScript, reportFigures } from './lib/cli.ts';
import { loadGeneratedEntities } from './lib/load.ts';
import { median, runsNote, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, recreateDatabase, startStack } from './lib/stack.ts';

const DATABASE = 'er_bench_standby';
const FEED_PAGE = 10_000;
const ROTATION_MAX_LAG_SECONDS = 2;

interface ReadTimes {
  walk: number[];
  harvest: number[];
}

interface LagSample {
  seconds: number;
  bytes: number;
}

/** Reads a page to its end over a kept-alive connection; its status and the body's last kilobyte (where tokens and counts are). */
function readPage(agent: Agent, url: string): Promise<{ status: number; tail: string; revInfos: number }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { agent, headers: { authorization: `Bearer ${BENCH_TOKEN}` } }, (response) => {
      let tail = '';
      let revInfos = 0;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const joined = tail + chunk;
        revInfos += (joined.match(/<revInfo /g)?.length ?? 0) - (tail.match(/<revInfo /g)?.length ?? 0);
        tail = joined.slice(-1024);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, tail, revInfos }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function walkFeed(apiUrl: string, to: string, entities: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const started = performance.now();
  let seen = 0;
  try {
    for (let page = 1; ; page += 1) {
      const read = await readPage(
        agent,
        `${apiUrl}/api/v2/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${to}&page=${page}&pageSize=${FEED_PAGE}`,
      );
      if (read.status !== 200) throw new Error(`feed page ${page}: HTTP ${read.status}: ${read.tail}`);
      seen += read.revInfos;
      if (read.revInfos < FEED_PAGE) break;
    }
  } finally {
    agent.destroy();
  }
  if (seen !== entities) throw new Error(`the walk saw ${seen} records, expected ${entities}`);
  return (performance.now() - started) / 1000;
}

async function harvest(apiUrl: string): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const started = performance.now();
  let next: string | undefined = 'verb=ListIdentifiers&metadataPrefix=oai_dc';
  try {
    while (next !== undefined) {
      const read = await readPage(agent, `${apiUrl}/oai?${next}`);
      if (read.status !== 200 || read.tail.includes('<error code=')) throw new Error(`${next}: HTTP ${read.status}: ${read.tail}`);
      const token = /<resumptionToken[^>]*>([^<]*)<\/resumptionToken>/.exec(read.tail)?.[1];
      next = token ? `verb=ListIdentifiers&resumptionToken=${encodeURIComponent(token)}` : undefined;
    }
  } finally {
    agent.destroy();
  }
  return (performance.now() - started) / 1000;
}

async function readTimes(primary: Cluster, readUrls: string, to: string, entities: number, runs: number): Promise<ReadTimes> {
  const stack = await startStack(
    DATABASE,
    { DATABASE_READ_URLS: readUrls, OAI_PMH: 'bearer' },
    { reuseDatabase: true, databaseServer: primary.url('postgres') },
  );
  const times: ReadTimes = { walk: [], harvest: [] };
  try {
    for (let run = 0; run < runs; run += 1) {
      times.walk.push(await walkFeed(stack.apiUrl, to, entities));
      times.harvest.push(await harvest(stack.apiUrl));
    }
  } finally {
    await stack.stop();
  }
  return times;
}

/** pg_stat_replication every 100 ms until `until` settles: the standby's replay lag as the primary sees it. */
async function watchLag(primary: Cluster, until: Promise<unknown>): Promise<LagSample[]> {
  const samples: LagSample[] = [];
  let done = false;
  const finished = () => {
    done = true;
  };
  until.then(finished, finished);
  while (!done) {
    const [row] = await primary.sql<{ seconds: number | null; bytes: string | null }>(
      'postgres',
      `select extract(epoch from replay_lag)::float8 as seconds, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text as bytes
         from pg_stat_replication limit 1`,
    );
    if (row) samples.push({ seconds: row.seconds ?? 0, bytes: Number(row.bytes ?? 0) });
    await sleep(100);
  }
  return samples;
}

interface RotationTimes {
  stoppedLeaves: number;
  startedRejoins: number;
  lagLeaves: number;
  caughtUpRejoins: number;
}

/** Seconds from now until `view()` says `inRotation === wanted` (polled every 20 ms). */
async function secondsUntil(inRotation: () => boolean, wanted: boolean, what: string): Promise<number> {
  const started = performance.now();
  await pollUntil(async () => (inRotation() === wanted ? true : undefined), { timeoutMs: 60_000, intervalMs: 20, what });
  return (performance.now() - started) / 1000;
}

async function rotationTimes(url: string, standby: Cluster, database: string): Promise<RotationTimes> {
  const db = await openDb(url, { standbys: { urls: [standby.url(database)], maxLagSeconds: ROTATION_MAX_LAG_SECONDS } });
  const inRotation = () => db.reads.standbys()[0]!.inRotation;
  try {
    await secondsUntil(inRotation, true, 'the standby in the rotation');
    await standby.stop('immediate');
    const stoppedLeaves = await secondsUntil(inRotation, false, 'the stopped standby to leave');
    await standby.start();
    const startedRejoins = await secondsUntil(inRotation, true, 'the started standby to rejoin');

    // Lagging: replay paused while the primary writes WAL (a message a tick, no table).
    await standby.sql(database, 'select pg_wal_replay_pause()');
    let writing = true;
    const ticks = (async () => {
      while (writing) {
        await db.pool.query(`select pg_logical_emit_message(false, 'bench-standby', 'tick')`);
        await sleep(50);
      }
    })();
    let lagLeaves: number;
    try {
      lagLeaves = await secondsUntil(inRotation, false, 'the lagging standby to leave');
    } finally {
      await standby.sql(database, 'select pg_wal_replay_resume()');
    }
    const caughtUpRejoins = await secondsUntil(inRotation, true, 'the caught-up standby to rejoin');
    writing = false;
    await ticks;
    return { stoppedLeaves, startedRejoins, lagLeaves, caughtUpRejoins };
  } finally {
    await db.close();
  }
}

export async function standbyFigures(entities: number, smoke: boolean): Promise<Figure[]> {
  const unavailable = standbysUnavailable();
  if (unavailable) throw new Error(`bench:standby needs PostgreSQL's server binaries: ${unavailable}`);
  const runs = smoke ? 1 : 3;
  const primary = await startPrimary();
  let standby: Cluster | undefined;
  try {
    standby = await startStandby(primary);
    const url = await recreateDatabase(DATABASE, primary.url('postgres'));
    const importing = loadGeneratedEntities(url, entities);
    const [loaded, lag] = await Promise.all([importing, watchLag(primary, importing)]);
    process.stderr.write(`standby: imported ${entities} entities in ${loaded.seconds.toFixed(1)} s\n`);
    const [latest] = await primary.sql<{ uuid: string }>(
      DATABASE,
      'select uuid from transaction where commit_seq is not null order by commit_seq desc limit 1',
    );
    const to = latest!.uuid;
    await pollUntil(
      async () => ((await standby!.sql(DATABASE, 'select 1 from transaction where uuid = $1', [to])).length > 0 ? true : undefined),
      {
        timeoutMs: 5 * 60_000,
        what: 'the standby replaying the import',
      },
    );

    const onStandby = await readTimes(primary, standby.url(DATABASE), to, entities, runs);
    const onPrimary = await readTimes(primary, '', to, entities, runs);
    const rotation = await rotationTimes(url, standby, DATABASE);

    const label = entities.toLocaleString('en');
    const lagSeconds = lag.map((sample) => sample.seconds).sort((a, b) => a - b);
    const lagBytes = lag.map((sample) => sample.bytes).sort((a, b) => a - b);
    const MB = 1024 * 1024;
    const seconds = (value: number, name: string, target: string, met: boolean, note?: string): Figure => ({
      figure: name,
      value,
      unit: 's',
      target,
      met,
      ...(note ? { note } : {}),
    });
    return [
      {
        figure: `feed walk on the standby, ${label} entities`,
        value: median(onStandby.walk),
        unit: 's',
        baseline: median(onPrimary.walk),
        baselineName: 'on the primary',
        target: 'reported (one machine: the cost of the path, not capacity)',
        met: true,
        info: true,
        note: `${runsNote(onStandby.walk, 's')}; pages of ${FEED_PAGE}`,
      },
      {
        figure: `OAI ListIdentifiers on the standby, ${label} entities`,
        value: median(onStandby.harvest),
        unit: 's',
        baseline: median(onPrimary.harvest),
        baselineName: 'on the primary',
        target: 'reported (one machine: the cost of the path, not capacity)',
        met: true,
        info: true,
        note: runsNote(onStandby.harvest, 's'),
      },
      {
        figure: `replication lag during a ${label}-entity import, p95 / max`,
        value: percentile(lagSeconds, 95),
        unit: 's',
        target: `reported; max ${lagSeconds.at(-1)?.toFixed(2) ?? '0'} s`,
        met: true,
        info: true,
        note: `${lag.length} samples; bytes behind p95 ${(percentile(lagBytes, 95) / MB).toFixed(1)} MB, max ${((lagBytes.at(-1) ?? 0) / MB).toFixed(1)} MB`,
      },
      seconds(
        rotation.stoppedLeaves,
        'a stopped standby leaves the rotation',
        '≤ 3 s',
        rotation.stoppedLeaves <= 3,
        'checked each second, 2 s bound per check',
      ),
      seconds(rotation.startedRejoins, 'a started standby rejoins the rotation', '≤ 3 s', rotation.startedRejoins <= 3),
      seconds(
        rotation.lagLeaves,
        `a lagging standby leaves the rotation (REPLICA_MAX_LAG ${ROTATION_MAX_LAG_SECONDS} s)`,
        `≤ ${ROTATION_MAX_LAG_SECONDS + 2} s`,
        rotation.lagLeaves <= ROTATION_MAX_LAG_SECONDS + 2,
        'from replay paused, the primary writing',
      ),
      seconds(
        rotation.caughtUpRejoins,
        'a caught-up standby rejoins the rotation',
        '≤ 3 s',
        rotation.caughtUpRejoins <= 3,
        'from replay resumed',
      ),
    ].map((figure) => (smoke ? { ...figure, met: true, info: true } : figure));
  } finally {
    await standby?.remove();
    await primary.remove();
  }
}

if (isScript(import.meta)) {
  const values = commandOptions({ entities: '100000' }, { optional: ['json', 'smoke-size'] });
  const smokeSize = values['smoke-size'];
  const entities = Number((smokeSize ?? values.entities).replace(/_/g, ''));
  if (!Number.isInteger(entities) || entities < 1)
    throw new Error(`--entities / --smoke-size: a positive integer; got ${smokeSize ?? values.entities}`);
  await reportFigures(values.json, () => standbyFigures(entities, smokeSize !== undefined));
}
