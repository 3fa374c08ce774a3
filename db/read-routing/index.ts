import pg from 'pg';
import { activityStreamRepository, type ActivityStreamRepository } from '../activity-stream.ts';
import { exportRecordsOver, type ExportRecords } from '../export-records.ts';
import type { FeedRepository } from '../feed.ts';
import { oaiRepository, type OaiRepository } from '../oai.ts';
import { recordRepository, type RecordRepository } from '../records.ts';
import { searchRepository, type SearchRepository } from '../search/repository.ts';
import { withDatabaseUser } from '../mikro-orm.config.ts';
import { lsnValue } from './lsn.ts';
import { StandbyMonitor, type MonitorLog, type StandbyView } from './monitor.ts';
import { withFallback } from './fallback.ts';

// Reads served by PostgreSQL hot standbys (docs/decisions/0192). A use case
// names what its read needs, never where it runs: the transactions it reads
// up to, a commit point, a principal's own writes, or nothing beyond
// REPLICA_MAX_LAG. The choice is made here, from the monitor's cache and at
// most one probe on the chosen standby; a read that fails for the standby's
// sake runs again, once, on the primary.

/** The repositories a read uses, on the primary or on one standby. */
export interface ReadSide {
  readonly feed: FeedRepository;
  readonly oai: OaiRepository;
  readonly activityStream: ActivityStreamRepository;
  readonly exportRecords: ExportRecords;
  readonly records: RecordRepository;
  readonly search: SearchRepository;
  /** 'primary', or the standby's URL without credentials. */
  readonly on: string;
}

type ReadNeed =
  /** Nothing named: the freshest standby within REPLICA_MAX_LAG. */
  | { fresh: true }
  /** Reads up to these transactions (UUIDs): a standby on which every one is committed (and past the principal's own writes). */
  | { transactions: readonly string[]; principal?: string }
  /** Reads as of a commit point (a commit_seq the primary handed out): a standby on which it is committed. */
  | { commitSeq: string }
  /** The reads of a principal: past the last write this process saw it make, else fresh. */
  | { principal: string };

export interface ReadRouting {
  /** Where a read with this need runs. */
  side(need: ReadNeed): Promise<ReadSide>;
  /**
   * A principal's write is committed (its batch seen COMPLETED, its v1 save answered): its next reads wait for a
   * standby that has replayed it, or go to the primary.
   */
  wrote(principal: string): Promise<void>;
  /** The standbys as this process sees them (empty without DATABASE_READ_URLS). */
  standbys(): readonly StandbyView[];
  close(): Promise<void>;
}

export interface StandbySettings {
  urls: readonly string[];
  maxLagSeconds: number;
  /** Connections of each standby's main pool and of its long-read pool. */
  connections: number;
  longReadConnections: number;
  /** The long-read bounds of the primary's long-read pool, kept on each standby's. */
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  acquireTimeoutMs?: number;
  log: MonitorLog;
}

/** The repositories over the primary's pools, as the rest of db/ builds them. */
export interface PrimaryReads {
  pool: pg.Pool;
  side: ReadSide;
  /** The feed over another pool, with the primary's layout settings. */
  feedOver(pool: pg.Pool): FeedRepository;
}

interface Standby {
  view: StandbyView;
  side: ReadSide;
  pool: pg.Pool;
  pools: pg.Pool[];
}

/** Own writes are remembered this much longer than a standby may lag: past that, any standby in the rotation has them. */
const OWN_WRITE_MARGIN_MS = 10_000;
/** Principals remembered at most (the oldest go first): memory does not grow with the clients. */
const OWN_WRITES_KEPT = 10_000;

export async function readRouting(primary: PrimaryReads, settings: StandbySettings | undefined): Promise<ReadRouting> {
  if (!settings || settings.urls.length === 0) {
    return {
      side: () => Promise.resolve(primary.side),
      wrote: () => Promise.resolve(),
      standbys: () => [],
      close: () => Promise.resolve(),
    };
  }
  const monitor = new StandbyMonitor(primary.pool, settings.urls, settings.maxLagSeconds, settings.log);
  const standbys: Standby[] = settings.urls.map((url, index) => standbyOver(url, monitor.views[index]!, settings, primary, monitor));
  await monitor.start();
  const ownWrites = new Map<string, { lsn: bigint; until: number }>();

  /** Where a standby must have replayed to for this principal to see its own writes. */
  const ownWrite = (principal: string | undefined): bigint => {
    const own = principal === undefined ? undefined : ownWrites.get(principal);
    if (!own) return 0n;
    if (own.until >= Date.now()) return own.lsn;
    ownWrites.delete(principal!);
    return 0n;
  };
  const serve = (standby: Standby): ReadSide => {
    standby.view.served += 1;
    return standby.side;
  };
  const onFreshest = (past = 0n): ReadSide => {
    const standby = freshest(past);
    return standby ? serve(standby) : primary.side;
  };
  const inRotation = () => standbys.filter((standby) => standby.view.inRotation);
  const freshest = (past = 0n) =>
    inRotation()
      .filter((standby) => standby.view.replayed >= past)
      .sort((a, b) => (a.view.replayed === b.view.replayed ? Math.random() - 0.5 : a.view.replayed > b.view.replayed ? -1 : 1))[0];

  /** The freshest standby on which `probe` finds what the read needs; the primary when none does. */
  const confirmed = async (probe: (pool: pg.Pool) => Promise<boolean>, past = 0n): Promise<ReadSide> => {
    const standby = freshest(past);
    if (!standby) return primary.side;
    try {
      return (await probe(standby.pool)) ? serve(standby) : primary.side;
    } catch (error) {
      if (standbyFailure(error)) monitor.markDown(standby.view);
      return primary.side;
    }
  };

  return {
    async side(need) {
      if ('transactions' in need) {
        const uuids = [...new Set(need.transactions)];
        return confirmed(async (pool) => {
          const { rows } = await pool.query<{ n: number }>(
            'select count(*)::int as n from transaction where uuid = any($1::uuid[]) and commit_seq is not null',
            [uuids],
          );
          return rows[0]!.n === uuids.length;
        }, ownWrite(need.principal));
      }
      if ('commitSeq' in need) {
        if (need.commitSeq === '0') return onFreshest();
        return confirmed(async (pool) => {
          const { rowCount } = await pool.query('select 1 from transaction where commit_seq = $1', [need.commitSeq]);
          return rowCount === 1;
        });
      }
      if ('principal' in need) return onFreshest(ownWrite(need.principal));
      return onFreshest();
    },

    async wrote(principal) {
      // Taken after the commit is known: the commit record lies before this position.
      const { rows } = await primary.pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
      ownWrites.delete(principal);
      ownWrites.set(principal, { lsn: lsnValue(rows[0]!.lsn), until: Date.now() + settings.maxLagSeconds * 1000 + OWN_WRITE_MARGIN_MS });
      if (ownWrites.size > OWN_WRITES_KEPT) ownWrites.delete(ownWrites.keys().next().value!);
    },

    standbys: () => monitor.views,

    async close() {
      await monitor.stop();
      await Promise.all(standbys.flatMap((standby) => standby.pools.map((pool) => pool.end())));
    },
  };
}

function standbyOver(url: string, view: StandbyView, settings: StandbySettings, primary: PrimaryReads, monitor: StandbyMonitor): Standby {
  const common = {
    connectionString: withDatabaseUser(url),
    // The primary pool's type parsers (MikroORM's): rows read the same on either side.
    types: primary.pool.options.types,
    application_name: 'entity-records-standby-read',
    ...(settings.acquireTimeoutMs ? { connectionTimeoutMillis: settings.acquireTimeoutMs } : {}),
  };
  const pool = new pg.Pool({ ...common, max: settings.connections });
  const longReads = new pg.Pool({
    ...common,
    max: settings.longReadConnections,
    ...(settings.statementTimeoutMs > 0 ? { statement_timeout: settings.statementTimeoutMs } : {}),
    ...(settings.idleInTransactionTimeoutMs > 0 ? { idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs } : {}),
  });
  for (const each of [pool, longReads]) {
    // A standby that goes away must not take the process down: its reads fall back, the monitor takes it out.
    each.on('error', () => undefined);
    each.on('connect', (client) => client.on('error', () => undefined));
  }
  const down = () => monitor.markDown(view);
  const fallback = <T extends object>(onStandby: T, onPrimary: T) => withFallback(onStandby, onPrimary, standbyFailure, down);
  const p = primary.side;
  const standbyFeed = primary.feedOver(longReads);
  const side: ReadSide = {
    // A range's layout may be made and kept (a write): on the primary; its pages are read here.
    feed: fallback({ ...standbyFeed, range: p.feed.range }, p.feed),
    // The harvest point takes the commit-order lock: on the primary; the records as of it, here.
    oai: fallback({ ...oaiRepository(longReads), harvestPoint: p.oai.harvestPoint }, p.oai),
    activityStream: fallback(activityStreamRepository(longReads), p.activityStream),
    exportRecords: fallback(exportRecordsOver(longReads), p.exportRecords),
    records: fallback(recordRepository(pool), p.records),
    search: fallback(searchRepository(pool), p.search),
    on: view.name,
  };
  return { view, side, pool, pools: [pool, longReads] };
}

/**
 * The standby, not the read, failed: it does not answer (no SQLSTATE, class 08, shut down 57P01-57P03), or replay
 * cancelled the read (40001, and 57P04 for a dropped database: PostgreSQL's codes for recovery conflicts).
 */
function standbyFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return true;
  if (/^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08') || ['57P01', '57P02', '57P03', '57P04', '40001'].includes(code);
  // Node's socket errors (ECONNREFUSED, ECONNRESET, ...).
  return true;
}
