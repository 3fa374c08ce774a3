import type pg from 'pg';
import { streamPages } from './cursor.ts';
import type { EntityRecord } from '../domain/model.ts';

// The reads behind OAI-PMH (docs/decisions/0130-oai-pmh-harvest-as-of-a-commit-point.md,
// 0135-oai-pmh-pages-at-the-cost-of-the-page.md).
//
// A record's datestamp is the commit time (transaction.created_at, set at
// COMMIT under the commit-order lock) of its latest revision. A harvest is
// pinned to a commit point C (a commit_seq): it serves each record once, in
// its version as of C, the latest revision whose transaction has
// commit_seq <= C. A list without from/until walks entity ids (the primary
// key) from the last one served; a list with from or until walks the
// revisions of the commits in its time window (transaction_created_at_idx
// finds the window, revision_seq_idx walks it) and serves a revision only
// when it is its record's version as of C. Either way a page costs its own
// rows, an empty window costs two index probes, and a whole harvest one pass.

/** Where a harvest stands: the commit point it is pinned to and the responseDate that goes with it. */
export interface HarvestPoint {
  /** The highest commit_seq committed: every commit numbered up to it is visible. */
  commitSeq: string;
  /** No commit still in flight can get an earlier commit time: UTC, whole seconds (YYYY-MM-DDThh:mm:ssZ). */
  responseDate: string;
  /** The records as of commitSeq (of one type when asked so), from the kept counts: when asked for. */
  records?: number;
}

/** Which records a list asks for; bounds are inclusive, whole seconds. */
export interface HarvestFilter {
  entityType?: string;
  from?: string;
  until?: string;
}

/** The commits of a time window, and the transaction seqs their revisions lie between. */
interface CommitWindow {
  firstCommit: string;
  lastCommit: string;
  firstSeq: string;
  lastSeq: string;
}

/** A place in a window's walk: after this revision (transaction seq, entity id), up to seq lastSeq. */
interface WindowPlace {
  window: Pick<CommitWindow, 'firstCommit' | 'lastCommit' | 'lastSeq'>;
  afterSeq: string;
  afterEntity: string;
}

/** A record as of a commit point: what its header needs, and its content when asked for. */
export interface HarvestedRecord {
  entityId: string;
  /** The transaction seq of the version served (a window walk's place). */
  seq: string;
  entityUuid: string;
  /** The commit time of this version: UTC, whole seconds. */
  datestamp: string;
  entityType: string;
  deleted: boolean;
  /** The stored v2 document (UTF-8 bytes one character a byte), when asked for and this version has one. */
  documentBytes?: string;
  /** The record, when asked for and no document is given. */
  record?: EntityRecord;
}

/** What a page reads beside the header: nothing, the native document (record where none is stored), or the record. */
export type HarvestContent = 'none' | 'document' | 'record';

export interface OaiRepository {
  /**
   * The commit point a harvest is pinned to and its responseDate. Taken under
   * the commit-order lock, shared: a commit whose time was drawn before it is
   * visible by then, and one drawn after gets a later time. Undefined when
   * a commit held the lock longer than `lockTimeoutMs`.
   */
  harvestPoint(lockTimeoutMs: number, count?: { entityType?: string }): Promise<HarvestPoint | undefined>;
  /** The commits as of C whose time is within from/until (inclusive, whole seconds); undefined when none is. */
  commitWindow(filter: Pick<HarvestFilter, 'from' | 'until'>, commitSeq: string): Promise<CommitWindow | undefined>;
  /** Up to `limit` records after entityId `after`, as of the commit point, in entityId order, a cursor read at a time. */
  records(
    filter: HarvestFilter,
    commitSeq: string,
    after: string,
    limit: number,
    content: HarvestContent,
  ): AsyncGenerator<HarvestedRecord[]>;
  /** Up to `limit` records of a commit window after `place`, as of the commit point, in (seq, entity id) order. */
  windowRecords(
    filter: HarvestFilter,
    commitSeq: string,
    place: WindowPlace,
    limit: number,
    content: HarvestContent,
  ): AsyncGenerator<HarvestedRecord[]>;
  /** The record's latest committed version; undefined when there is no such record. */
  currentRecord(entityUuid: string, content: HarvestContent): Promise<HarvestedRecord | undefined>;
  /** The entity types the registry has counted records of, even where none is left of a type (the sets). */
  entityTypes(): Promise<string[]>;
  /** The commit time of the first transaction that wrote a record; undefined before any. */
  earliestDatestamp(): Promise<string | undefined>;
}

interface Row {
  id: string;
  seq: string;
  uuid: string;
  datestamp: string;
  entity_type: string;
  state: string;
  document_bytes?: string | null;
  record?: EntityRecord | null;
}

/** A time as a datestamp, in SQL: UTC, whole seconds (truncated, as from and until compare). */
const DATESTAMP = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

const LOCK_NOT_AVAILABLE = '55P03';
/** Rows per cursor read: a page of 1,000 native records in two round trips, a few MB at most in memory. */
const ROWS_PER_READ = 500;

const DELETED_STATES = new Set(['ERS_INVALID', 'ERS_REPLACED']);

/**
 * A page is a walk of an index in its order, a primary-key lookup per row:
 * on tables never analyzed (after a bulk load) the planner would rather sort
 * and hash whole tables. Those plans are turned off for the page's own
 * transaction, so the plan does not depend on statistics (and JIT, which
 * the penalty of a turned-off plan would set off, with them).
 */
async function indexPlansOnly(client: pg.PoolClient): Promise<void> {
  await client.query(
    `select set_config('enable_sort', 'off', true), set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true),
            set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true), set_config('enable_material', 'off', true),
            set_config('jit', 'off', true)`,
  );
}

/** The content columns of a page: of the current revision (e) when it is the one as of C, else of the revision as of C (old). */
const CONTENT: Record<HarvestContent, string> = {
  none: '',
  document: `, case when cur.seq is not null and e.state not in ('ERS_INVALID', 'ERS_REPLACED') then e.document_bytes end as document_bytes,
             case when cur.seq is null then old.record when e.state in ('ERS_INVALID', 'ERS_REPLACED') or e.document_bytes is not null then null else e.record end as record`,
  record: `, case when cur.seq is null then old.record when e.state in ('ERS_INVALID', 'ERS_REPLACED') then null else e.record end as record`,
};

/**
 * Each entity's version as of commit point $1: its current revision when
 * that committed by then (cur: one primary-key lookup, almost every record of
 * a harvest), else its latest revision that did (old: looked up only then).
 * An entity that did not exist yet has neither and is left out.
 */
function asOf(content: HarvestContent, oldRecord: boolean): string {
  return `select e.id, e.uuid, coalesce(cur.seq, old.seq) as seq,
      coalesce(cur.created_at, old.created_at) as changed_at,
      case when cur.seq is not null then e.entity_type else old.entity_type end as entity_type,
      case when cur.seq is not null then e.state else old.state end as state
      ${CONTENT[content]}
    from entity e
    left join transaction cur on cur.seq = e.last_seq and cur.commit_seq <= $1
    left join lateral (
      select t.seq, t.created_at, v.record->>'entityType' as entity_type, v.record->>'state' as state${oldRecord ? ', v.record' : ''}
        from revision r join transaction t on t.seq = r.seq
        cross join lateral (select coalesce(r.snapshot, e.record) as record) v
       where cur.seq is null and r.entity_id = e.id and t.commit_seq <= $1
       order by r.seq desc limit 1) old on true`;
}

/** The filter on the versions as of C, its parameters numbered from `first`. */
function filterOf(filter: HarvestFilter, first: number): { where: string; params: unknown[] } {
  const conditions = ['x.changed_at is not null'];
  const params: unknown[] = [];
  if (filter.entityType !== undefined) {
    params.push(filter.entityType);
    conditions.push(`x.entity_type = $${first + params.length - 1}`);
  }
  if (filter.from !== undefined) {
    params.push(filter.from);
    conditions.push(`x.changed_at >= $${first + params.length - 1}::timestamptz`);
  }
  if (filter.until !== undefined) {
    // Datestamps are whole seconds: until names its whole second.
    params.push(filter.until);
    conditions.push(`x.changed_at < $${first + params.length - 1}::timestamptz + interval '1 second'`);
  }
  return { where: conditions.join(' and '), params };
}

/** The content columns of a window's revision r: the entity's current columns when r is its current revision, else r's snapshot. */
const WINDOW_CONTENT: Record<HarvestContent, string> = {
  none: '',
  document: `, case when r.seq = e.last_seq and e.state not in ('ERS_INVALID', 'ERS_REPLACED') then e.document_bytes end as document_bytes,
             case when r.seq <> e.last_seq then r.snapshot when e.state in ('ERS_INVALID', 'ERS_REPLACED') or e.document_bytes is not null then null else e.record end as record`,
  record: `, case when r.seq <> e.last_seq then r.snapshot when e.state in ('ERS_INVALID', 'ERS_REPLACED') then null else e.record end as record`,
};

/**
 * The revisions of a commit window after ($2, $3) up to seq $4, each only when
 * it is its record's version as of C ($1: no later revision committed by
 * then), its commit within the window ($5…$6, and its time within from $8 and
 * until $9, should a clock ever step back), at most $7, of type $10 when given.
 */
function windowWalk(content: HarvestContent, typed: boolean): string {
  const entityType = `case when r.seq = e.last_seq then e.entity_type else r.snapshot->>'entityType' end`;
  return `select e.id, e.uuid, r.seq, ${DATESTAMP('t.created_at')} as datestamp,
      ${entityType} as entity_type,
      case when r.seq = e.last_seq then e.state else r.snapshot->>'state' end as state
      ${WINDOW_CONTENT[content]}
    from revision r
    -- Subqueries the planner keeps as written (offset 0): revision_seq_idx drives, each row a primary-key lookup.
    cross join lateral (select tt.created_at, tt.commit_seq from transaction tt where tt.seq = r.seq offset 0) t
    join entity e on e.id = r.entity_id
   where (r.seq, r.entity_id) > ($2::bigint, $3::bigint) and r.seq <= $4::bigint
     and t.commit_seq between $5::bigint and $6::bigint and t.created_at >= $8::timestamptz and t.created_at < $9::timestamptz + interval '1 second'
     and not exists (
       select 1 from revision later
       cross join lateral (select lt.commit_seq from transaction lt where lt.seq = later.seq offset 0) lt
        where later.entity_id = r.entity_id and later.seq <> r.seq and lt.commit_seq > t.commit_seq and lt.commit_seq <= $1::bigint)
     ${typed ? `and ${entityType} = $10` : ''}
   order by r.seq, r.entity_id
   limit $7`;
}

function harvested(row: Row): HarvestedRecord {
  const record: HarvestedRecord = {
    entityId: String(row.id),
    seq: String(row.seq),
    entityUuid: row.uuid,
    datestamp: row.datestamp,
    entityType: row.entity_type,
    deleted: DELETED_STATES.has(row.state),
  };
  if (row.document_bytes !== undefined && row.document_bytes !== null) record.documentBytes = row.document_bytes;
  if (row.record !== undefined && row.record !== null) record.record = row.record;
  return record;
}

/** The commits whose time is within from/until, as of C. */
async function commitWindowOf(
  client: pg.PoolClient,
  filter: Pick<HarvestFilter, 'from' | 'until'>,
  commitSeq: string,
): Promise<CommitWindow | undefined> {
  // Commit times rise with commit_seq (both drawn under the commit-order lock): the window is a range of commits.
  const { rows } = await client.query<{ first_commit: string | null; last_commit: string | null }>(
    `select (select commit_seq from transaction where commit_seq is not null and created_at >= $2::timestamptz
                  order by created_at, commit_seq limit 1) as first_commit,
                (select commit_seq from transaction where commit_seq is not null and commit_seq <= $1::bigint and created_at < $3::timestamptz + interval '1 second'
                  order by created_at desc, commit_seq desc limit 1) as last_commit`,
    [commitSeq, filter.from ?? '-infinity', filter.until ?? 'infinity'],
  );
  const firstCommit = rows[0]!.first_commit;
  const lastCommit = rows[0]!.last_commit;
  if (firstCommit === null || lastCommit === null || BigInt(firstCommit) > BigInt(lastCommit)) return undefined;
  // A transaction's seq is drawn at its start and its commit_seq at its end: the window's seqs are those of its commits.
  const seqs = await client.query<{ first_seq: string; last_seq: string }>(
    'select min(seq) as first_seq, max(seq) as last_seq from transaction where commit_seq between $1::bigint and $2::bigint',
    [firstCommit, lastCommit],
  );
  return { firstCommit, lastCommit, firstSeq: seqs.rows[0]!.first_seq, lastSeq: seqs.rows[0]!.last_seq };
}

export function oaiRepository(pool: pg.Pool): OaiRepository {
  return {
    async harvestPoint(lockTimeoutMs, count) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('begin');
        await client.query(`select set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
        // The lock the commit trigger holds from drawing its time until its commit is visible (Migration20261124000040CommitOrder).
        await client.query('select pg_advisory_xact_lock_shared(1, 0)');
        // A statement of its own: its snapshot is taken once the lock is held, so the kept counts are exactly those as of the point.
        const { rows } = await client.query<{ commit_seq: string | null; now: string; records: string | null }>(
          `select (select max(commit_seq) from transaction) as commit_seq, ${DATESTAMP('clock_timestamp()')} as now,
                  case when $1 then (select coalesce(sum(entities), 0) from entity_count where $2::text is null or entity_type = $2) end as records`,
          [count !== undefined, count?.entityType ?? null],
        );
        await client.query('commit');
        const point: HarvestPoint = { commitSeq: rows[0]!.commit_seq ?? '0', responseDate: rows[0]!.now };
        if (rows[0]!.records !== null) point.records = Number(rows[0]!.records);
        return point;
      } catch (error) {
        broken = true;
        await client.query('rollback').catch(() => undefined);
        if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return undefined;
        throw error;
      } finally {
        client.release(broken);
      }
    },

    async commitWindow(filter, commitSeq) {
      const client = await pool.connect();
      try {
        await client.query('begin read only');
        await indexPlansOnly(client);
        return await commitWindowOf(client, filter, commitSeq);
      } finally {
        await client.query('rollback').catch(() => undefined);
        client.release();
      }
    },

    async *records(filter, commitSeq, after, limit, content) {
      const { where, params } = filterOf(filter, 4);
      const pages = streamPages<Row>(
        pool,
        `select x.*, ${DATESTAMP('x.changed_at')} as datestamp from (${asOf(content, content !== 'none')} where e.id > $2 order by e.id) x where ${where} order by x.id limit $3`,
        [commitSeq, after, limit, ...params],
        ROWS_PER_READ,
        indexPlansOnly,
      );
      for await (const rows of pages) yield rows.map(harvested);
    },

    async *windowRecords(filter, commitSeq, place, limit, content) {
      const { window } = place;
      const params: unknown[] = [
        commitSeq,
        place.afterSeq,
        place.afterEntity,
        window.lastSeq,
        window.firstCommit,
        window.lastCommit,
        limit,
        filter.from ?? '-infinity',
        filter.until ?? 'infinity',
      ];
      if (filter.entityType !== undefined) params.push(filter.entityType);
      const pages = streamPages<Row>(pool, windowWalk(content, filter.entityType !== undefined), params, ROWS_PER_READ, indexPlansOnly);
      for await (const rows of pages) yield rows.map(harvested);
    },

    async currentRecord(entityUuid, content) {
      const columns =
        content === 'none'
          ? ''
          : content === 'document'
            ? `, case when e.state not in ('ERS_INVALID', 'ERS_REPLACED') then e.document_bytes end as document_bytes,
               case when e.state not in ('ERS_INVALID', 'ERS_REPLACED') and e.document_bytes is null then e.record end as record`
            : `, case when e.state not in ('ERS_INVALID', 'ERS_REPLACED') then e.record end as record`;
      const { rows } = await pool.query<Row>(
        `select e.id, e.uuid, e.last_seq as seq, ${DATESTAMP('t.created_at')} as datestamp, e.entity_type, e.state ${columns}
           from entity e join transaction t on t.seq = e.last_seq
          where e.uuid = $1 and t.commit_seq is not null`,
        [entityUuid],
      );
      return rows[0] && harvested(rows[0]);
    },

    async entityTypes() {
      const { rows } = await pool.query<{ entity_type: string }>('select distinct entity_type from entity_count order by entity_type');
      return rows.map((row) => row.entity_type);
    },

    async earliestDatestamp() {
      const { rows } = await pool.query<{ created_at: string }>(
        `select ${DATESTAMP('t.created_at')} as created_at from transaction t where t.commit_seq is not null and exists (select 1 from revision r where r.seq = t.seq) order by t.commit_seq limit 1`,
      );
      return rows[0]?.created_at;
    },
  };
}
