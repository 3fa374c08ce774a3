import type pg from 'pg';
import { streamPages } from './cursor.ts';
import type { EntityRecord } from '../domain/model.ts';

// The reads behind OAI-PMH (docs/decisions/0130-oai-pmh-harvest-as-of-a-commit-point.md).
//
// A record's datestamp is the commit time (transaction.created_at, set at
// COMMIT under the commit-order lock) of its latest revision. A harvest is
// pinned to a commit point C (a commit_seq): it serves each record once, in
// its version as of C, the latest revision whose transaction has
// commit_seq <= C. Pages walk entity ids (the primary key) from the last one
// served, so a page costs its own rows and a whole harvest one pass.

/** Where a harvest stands: the commit point it is pinned to and the responseDate that goes with it. */
export interface HarvestPoint {
  /** The highest commit_seq committed: every commit numbered up to it is visible. */
  commitSeq: string;
  /** No commit still in flight can get an earlier commit time: UTC, whole seconds (YYYY-MM-DDThh:mm:ssZ). */
  responseDate: string;
}

/** Which records a list asks for; bounds are inclusive, whole seconds. */
export interface HarvestFilter {
  entityType?: string;
  from?: string;
  until?: string;
}

/** A record as of a commit point: what its header needs, and its content when asked for. */
export interface HarvestedRecord {
  entityId: string;
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
  harvestPoint(lockTimeoutMs: number): Promise<HarvestPoint | undefined>;
  /** How many records the list has as of the commit point (one pass, on a list's first page). */
  countRecords(filter: HarvestFilter, commitSeq: string): Promise<number>;
  /** Up to `limit` records after entityId `after`, as of the commit point, in entityId order, a cursor read at a time. */
  records(
    filter: HarvestFilter,
    commitSeq: string,
    after: string,
    limit: number,
    content: HarvestContent,
  ): AsyncGenerator<HarvestedRecord[]>;
  /** The record's latest committed version; undefined when there is no such record. */
  currentRecord(entityUuid: string, content: HarvestContent): Promise<HarvestedRecord | undefined>;
  /** The entity types records have now (the sets). */
  entityTypes(): Promise<string[]>;
  /** The commit time of the first transaction that wrote a record; undefined before any. */
  earliestDatestamp(): Promise<string | undefined>;
}

interface Row {
  id: string;
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
  return `select e.id, e.uuid,
      coalesce(cur.created_at, old.created_at) as changed_at,
      case when cur.seq is not null then e.entity_type else old.entity_type end as entity_type,
      case when cur.seq is not null then e.state else old.state end as state
      ${CONTENT[content]}
    from entity e
    left join transaction cur on cur.seq = e.last_seq and cur.commit_seq <= $1
    left join lateral (
      select t.created_at, v.record->>'entityType' as entity_type, v.record->>'state' as state${oldRecord ? ', v.record' : ''}
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

function harvested(row: Row): HarvestedRecord {
  const record: HarvestedRecord = {
    entityId: String(row.id),
    entityUuid: row.uuid,
    datestamp: row.datestamp,
    entityType: row.entity_type,
    deleted: DELETED_STATES.has(row.state),
  };
  if (row.document_bytes !== undefined && row.document_bytes !== null) record.documentBytes = row.document_bytes;
  if (row.record !== undefined && row.record !== null) record.record = row.record;
  return record;
}

export function oaiRepository(pool: pg.Pool): OaiRepository {
  return {
    async harvestPoint(lockTimeoutMs) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('begin');
        await client.query(`select set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
        // The lock the commit trigger holds from drawing its time until its commit is visible (Migration20261124000040CommitOrder).
        await client.query('select pg_advisory_xact_lock_shared(1, 0)');
        // A statement of its own: its snapshot is taken once the lock is held.
        const { rows } = await client.query<{ commit_seq: string | null; now: string }>(
          `select (select max(commit_seq) from transaction) as commit_seq, ${DATESTAMP('clock_timestamp()')} as now`,
        );
        await client.query('commit');
        return { commitSeq: rows[0]!.commit_seq ?? '0', responseDate: rows[0]!.now };
      } catch (error) {
        broken = true;
        await client.query('rollback').catch(() => undefined);
        if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return undefined;
        throw error;
      } finally {
        client.release(broken);
      }
    },

    async countRecords(filter, commitSeq) {
      const { where, params } = filterOf(filter, 2);
      const { rows } = await pool.query<{ n: string }>(`select count(*) as n from (${asOf('none', false)}) x where ${where}`, [
        commitSeq,
        ...params,
      ]);
      return Number(rows[0]!.n);
    },

    async *records(filter, commitSeq, after, limit, content) {
      const { where, params } = filterOf(filter, 4);
      const pages = streamPages<Row>(
        pool,
        `select x.*, ${DATESTAMP('x.changed_at')} as datestamp from (${asOf(content, content !== 'none')} where e.id > $2 order by e.id) x where ${where} order by x.id limit $3`,
        [commitSeq, after, limit, ...params],
        ROWS_PER_READ,
      );
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
        `select e.id, e.uuid, ${DATESTAMP('t.created_at')} as datestamp, e.entity_type, e.state ${columns}
           from entity e join transaction t on t.seq = e.last_seq
          where e.uuid = $1 and t.commit_seq is not null`,
        [entityUuid],
      );
      return rows[0] && harvested(rows[0]);
    },

    async entityTypes() {
      const { rows } = await pool.query<{ entity_type: string }>(
        'select entity_type from entity_count group by entity_type having sum(entities) > 0 order by entity_type',
      );
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
