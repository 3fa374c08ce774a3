// The read standby killed (SIGKILL to its postmaster) while readers walk the
// feed and harvest OAI through the API and batches commit: every read keeps
// answering (docs/decisions/0192), the reads of the moment of the kill run
// again on the primary, and the standby, started again, serves reads again.
// The scenario runs on a PostgreSQL primary of its own with a streaming
// standby of it (test/support/standby.ts).
import pg from 'pg';
import { GENESIS_TRANSACTION_ID } from '../../../migrations/Migration20261123000005Genesis.ts';
import { generatedBatch, seededBatch } from '../lib/data.ts';
import { check, type Scenario, type ScenarioContext } from '../lib/scenario.ts';
import { pollUntil, sleep } from '../../support/poll.ts';
import { standbysUnavailable, startPrimary, startStandby, type Cluster } from '../../support/standby.ts';

const SEED = 3000;
const FEED_PAGE = 500;
const READERS = 3;
const READ_CONNECTIONS = 'entity-records-standby-read';

let clusters: { primary: Cluster; standby: Cluster; database: string } | undefined;

export const standbyKill: Scenario = {
  name: 'standby-kill',
  title: 'the read standby killed while readers walk the feed and harvest OAI and batches commit',
  timeoutMs: 8 * 60_000,
  env: { REPLICA_MAX_LAG: '30', OAI_PAGE_SIZE: '300' },
  async prepare(databaseName) {
    const unavailable = standbysUnavailable();
    if (unavailable) throw new Error(`standby-kill needs PostgreSQL's server binaries: ${unavailable}`);
    const primary = await startPrimary();
    // Copied before the stack makes its database: that arrives by streaming like everything after it.
    const standby = await startStandby(primary).catch(async (error: unknown) => {
      await primary.remove();
      throw error;
    });
    clusters = { primary, standby, database: databaseName };
    return {
      databaseServer: primary.url('postgres'),
      env: { DATABASE_READ_URLS: standby.url(databaseName) },
      async cleanup() {
        await standby.remove();
        await primary.remove();
        clusters = undefined;
      },
    };
  },
  run,
};

interface Reads {
  answered: number;
  failed: string[];
}

async function run(context: ScenarioContext): Promise<void> {
  const { client, db, log, figures } = context;
  const { standby, database } = clusters!;
  await seededBatch(context, 'seed', SEED, 3 * 60_000);
  const [latest] = await db.query<{ uuid: string }>(
    'select uuid from transaction where commit_seq is not null order by commit_seq desc limit 1',
  );
  const to = latest!.uuid;
  await pollUntil(
    async () => (await onStandby(standby, database, 'select 1 from transaction where uuid = $1', [to])).length > 0 || undefined,
    {
      timeoutMs: 60_000,
      what: 'the standby replaying the seed batch',
    },
  );

  const reads: Reads = { answered: 0, failed: [] };
  let stopping = false;
  const readOnce = async (path: string): Promise<string> => {
    const answer = await client.request(path);
    if (answer.status !== 200) reads.failed.push(`${path}: ${answer.status || answer.error} ${answer.body.slice(0, 200)}`);
    else reads.answered += 1;
    return answer.body;
  };
  const feedWalks = async () => {
    while (!stopping) {
      for (let page = 1; !stopping; page += 1) {
        const body = await readOnce(
          `/api/v2/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${to}&page=${page}&pageSize=${FEED_PAGE}`,
        );
        if ((body.match(/<revInfo /g)?.length ?? 0) < FEED_PAGE) break;
      }
    }
  };
  const harvests = async () => {
    while (!stopping) {
      let body = await readOnce('/oai?verb=ListIdentifiers&metadataPrefix=oai_dc');
      for (;;) {
        const token = /<resumptionToken[^>]*>([^<]+)<\/resumptionToken>/.exec(body)?.[1];
        if (!token || stopping) break;
        body = await readOnce(`/oai?verb=ListIdentifiers&resumptionToken=${encodeURIComponent(token)}`);
      }
    }
  };
  let batches = 0;
  const writes = async () => {
    while (!stopping) {
      const batch = await generatedBatch(context, `load${batches}`, 200);
      await client.submitBatchOk(batch.body);
      batches += 1;
      await sleep(200);
    }
  };
  const loops = [feedWalks(), harvests(), writes(), ...Array.from({ length: READERS - 2 }, feedWalks)];
  try {
    await pollUntil(async () => (reads.answered >= 30 ? true : undefined), { timeoutMs: 2 * 60_000, what: '30 reads before the kill' });
    const onStandby = await readConnections(standby, database);
    check(onStandby > 0, 'no read connection of the API on the standby before the kill');
    const beforeKill = reads.answered;
    standby.kill();
    log(`standby killed after ${beforeKill} reads (${onStandby} read connection(s) of the API on it)`);
    await pollUntil(async () => (reads.answered >= beforeKill + 60 ? true : undefined), {
      timeoutMs: 3 * 60_000,
      what: '60 reads after the kill',
    });
    figures['reads after the kill'] = String(reads.answered - beforeKill);

    // Started again (once the killed backends are gone): the API's reads come back to it.
    await pollUntil(() => standby.start().then(() => true), { timeoutMs: 60_000, what: 'the standby to start again' });
    await pollUntil(async () => ((await readConnections(standby, database)) > 0 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'reads on the standby again',
    });
    log('the standby, started again, serves reads again');
  } finally {
    stopping = true;
    await Promise.allSettled(loops);
  }
  figures.reads = `${reads.answered} answered, ${reads.failed.length} failed`;
  log(`${reads.answered} reads answered, ${batches} batches submitted under them`);
  check(reads.failed.length === 0, `reads failed: ${reads.failed.slice(0, 5).join(' | ')}`);
  const settled = await Promise.allSettled(loops);
  const crashed = settled.filter((outcome) => outcome.status === 'rejected');
  check(
    crashed.length === 0,
    `a load loop failed: ${crashed.map((outcome) => String((outcome as PromiseRejectedResult).reason)).join(' | ')}`,
  );
}

/** The rows of a query on the standby; none while it does not answer (killed, starting, its database not yet replayed). */
async function onStandby<T extends pg.QueryResultRow>(
  standby: Cluster,
  database: string,
  query: string,
  params: unknown[] = [],
): Promise<T[]> {
  try {
    return await standby.sql<T>(database, query, params);
  } catch (error) {
    if (error instanceof pg.DatabaseError || typeof (error as { code?: unknown }).code === 'string') return [];
    throw error;
  }
}

/** Connections of the API's standby pools on the standby. */
async function readConnections(standby: Cluster, database: string): Promise<number> {
  const [row] = await onStandby<{ n: number }>(
    standby,
    database,
    'select count(*)::int as n from pg_stat_activity where application_name = $1 and datname = $2',
    [READ_CONNECTIONS, database],
  );
  return row?.n ?? 0;
}
