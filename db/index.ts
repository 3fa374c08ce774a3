import pg from 'pg';
import { analyzer, type Analyzer } from './analyze.ts';
import { revisionStore, type RevisionStore } from './apply/index.ts';
import { BatchRepository } from './batches.ts';
import { exportRecordsOver, type ExportRecords } from './export-records.ts';
import { ExportRepository } from './exports.ts';
import { activityStreamRepository, type ActivityStreamRepository } from './activity-stream.ts';
import { feedRepository, type FeedRepository } from './feed.ts';
import { commitNotifications, type CommitNotifications } from './notify.ts';
import { JobOutcomes } from './job-outcomes.ts';
import { LongReadLeases } from './long-read-leases.ts';
import type { PoolOptions } from './mikro-orm.config.ts';
import { oaiRepository, type OaiRepository } from './oai.ts';
import { openOrm, type Orm } from './orm.ts';
import { recordRepository, type RecordRepository } from './records.ts';
import { readRouting, type ReadRouting } from './read-routing/index.ts';
import { ReplayGuard } from './replay-guard.ts';
import { searchRepository, type SearchRepository } from './search/repository.ts';
import { SubmissionRate } from './submission-rate.ts';

/**
 * The data-access layer as the rest of the service holds it: the ORM (its
 * EntityManager for the job rows, its migrator) and, for db/'s own modules
 * only, the pg pool behind it (COPY, cursors, the hot reads). Use cases take
 * this, never a pool; repositories join it as they move into db/.
 */
export interface Db {
  readonly orm: Orm;
  /** MikroORM's own pg pool: for db/ modules, not for callers outside db/. */
  readonly pool: pg.Pool;
  /** Records as clients read them (GET entity, and as of a revision). */
  readonly records: RecordRepository;
  /** The change feed (GET updates). */
  readonly feed: FeedRepository;
  /** The reads of OAI-PMH: records as of a harvest's commit point. */
  readonly oai: OaiRepository;
  /** The change feed as a log of activities in commit order (the Activity Streams feed, the push stream). */
  readonly activityStream: ActivityStreamRepository;
  /** Commits as they happen, from one LISTEN connection of this process (opened at the first subscriber). */
  readonly commits: CommitNotifications;
  /** The entity search. */
  readonly search: SearchRepository;
  /** The batch rows and their bodies. */
  readonly batches: BatchRepository;
  /** The export request rows. */
  readonly exports: ExportRepository;
  /** Finished batches and exports, counted for the metrics. */
  readonly jobOutcomes: JobOutcomes;
  /** Signed requests already answered (export starts), shared by every API process. */
  readonly replayGuard: ReplayGuard;
  /** The submission rate limit's counters, shared by every API process. */
  readonly submissionRate: SubmissionRate;
  /** The long reads each principal holds, shared by every API process. */
  readonly longReadLeases: LongReadLeases;
  /** The snapshot and revisions reads of the exports. */
  readonly exportRecords: ExportRecords;
  /** Applying batches: the apply's statements on a transaction (db/apply/). */
  readonly revisions: RevisionStore;
  /** Where a read runs: the primary, or a hot standby that has what it needs (DATABASE_READ_URLS). */
  readonly reads: ReadRouting;
  /** Planner statistics refreshed after large writes. */
  readonly analyzer: Analyzer;
  /** One round trip to the database; throws when it does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Settings of the data-access layer (config.ts has them). */
export interface DbOptions {
  pool?: PoolOptions;
  /**
   * Long reads (feed pages, the synchronous v1 exports) on a pool of their
   * own: however many run or wait, they never take a connection the short
   * reads and the writes need. Each statement, and each pause between a
   * cursor's reads while a slow client drains the response, is bounded, so a
   * reader that stalls loses its transaction instead of holding it.
   */
  longReads?: { connections: number; statementTimeoutMs: number; idleInTransactionTimeoutMs: number };
  /** Days a feed range's page layout is kept (FEED_RANGE_RETENTION_DAYS). */
  feedRangeRetentionDays?: number;
  /** Where the commit listener reports a lost connection; default: nowhere. */
  log?: { warn(object: object, message: string): void };
  /** Records between two anchors of a feed range's page layout (FEED_RANGE_ANCHOR_EVERY). */
  feedRangeAnchorEvery?: number;
  /** Hot standbys for reads (DATABASE_READ_URLS) and how far one may lag (REPLICA_MAX_LAG); none: every read on the primary. */
  standbys?: { urls: readonly string[]; maxLagSeconds: number };
}

export async function openDb(databaseUrl: string, options: DbOptions = {}): Promise<Db> {
  return dbOver(await openOrm(databaseUrl, options.pool), options);
}

/** The data-access layer over an ORM already open (tests that open their own). */
async function dbOver(orm: Orm, options: DbOptions = {}): Promise<Db> {
  const pool: pg.Pool = await orm.em.getConnection().getNativeClient();
  const longReadPool = options.longReads ? longReadPoolBeside(pool, options.longReads, options.pool?.acquireTimeoutMs) : pool;
  const log = options.log ?? { warn: () => undefined };
  const commits = commitNotifications(pool, log);
  const layout = { retentionDays: options.feedRangeRetentionDays ?? 7, anchorEvery: options.feedRangeAnchorEvery ?? 1000 };
  const onPrimary = {
    records: recordRepository(pool),
    feed: feedRepository(longReadPool, layout),
    oai: oaiRepository(longReadPool),
    activityStream: activityStreamRepository(longReadPool),
    search: searchRepository(pool),
    exportRecords: exportRecordsOver(longReadPool),
    on: 'primary',
  };
  const reads = await readRouting(
    { pool, side: onPrimary, feedOver: (over) => feedRepository(over, layout) },
    options.standbys && {
      ...options.standbys,
      connections: options.pool?.size ?? 10,
      longReadConnections: options.longReads?.connections ?? options.pool?.size ?? 10,
      statementTimeoutMs: options.longReads?.statementTimeoutMs ?? 0,
      idleInTransactionTimeoutMs: options.longReads?.idleInTransactionTimeoutMs ?? 0,
      acquireTimeoutMs: options.pool?.acquireTimeoutMs,
      log,
    },
  );
  return {
    orm,
    pool,
    records: onPrimary.records,
    feed: onPrimary.feed,
    oai: onPrimary.oai,
    activityStream: onPrimary.activityStream,
    commits,
    search: onPrimary.search,
    batches: new BatchRepository(orm, pool),
    exports: new ExportRepository(orm, pool),
    jobOutcomes: new JobOutcomes(pool),
    replayGuard: new ReplayGuard(pool),
    submissionRate: new SubmissionRate(pool),
    exportRecords: onPrimary.exportRecords,
    reads,
    longReadLeases: new LongReadLeases(pool),
    revisions: revisionStore(pool),
    analyzer: analyzer(pool),
    async ping() {
      await pool.query('select 1');
    },
    async close() {
      await reads.close();
      await commits.close();
      if (longReadPool !== pool) await longReadPool.end();
      await orm.close();
    },
  };
}

/** A second pool to the same database, with the first one's connection settings and type parsers. */
function longReadPoolBeside(pool: pg.Pool, settings: NonNullable<DbOptions['longReads']>, acquireTimeoutMs: number | undefined): pg.Pool {
  const { min: _min, max: _max, idleTimeoutMillis: _idle, connectionTimeoutMillis: _acquire, ...connection } = pool.options;
  const longReads = new pg.Pool({
    ...connection,
    max: settings.connections,
    ...(acquireTimeoutMs ? { connectionTimeoutMillis: acquireTimeoutMs } : {}),
    ...(settings.statementTimeoutMs > 0 ? { statement_timeout: settings.statementTimeoutMs } : {}),
    ...(settings.idleInTransactionTimeoutMs > 0 ? { idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs } : {}),
  });
  // A connection the server ended (an idle-in-transaction timeout) must not take the process down.
  longReads.on('error', () => undefined);
  longReads.on('connect', (client) => client.on('error', () => undefined));
  return longReads;
}
