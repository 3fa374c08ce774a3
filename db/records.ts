import type pg from 'pg';
import type { EntityRecord, EntityRef } from '../domain/model.ts';

/** Records as clients read them: the current form, and the form as of one revision. */
export interface RecordRepository {
  /**
   * The current form of a record, by number or UUID. The reads asked for
   * together go to PostgreSQL as one statement, `where id = any($1) or uuid =
   * any($2)`: one round trip for all of them instead of one each. Together
   * means in one turn of the event loop (the GETs whose requests arrived
   * together) or, while a statement of these reads is in flight, in any turn
   * until it is answered: those are sent as the next statement as soon as it
   * is. Each still reads the row as committed when its statement runs, after
   * its request arrived; nothing is kept once answered (no cache).
   */
  current(ref: EntityRef): Promise<EntityRecord | undefined>;
  /**
   * The current form of a record as a GET of its v2 document needs it: the
   * document stored beside the record (entity.document_bytes, the bytes
   * serializeEntity(record, 'v2') writes) when there is one, else the record.
   * Read together with current()'s reads, in the same statements; a read of
   * these alone asks PostgreSQL for the record only where no document is
   * stored (no jsonb sent, none parsed).
   */
  currentDocument(ref: EntityRef): Promise<CurrentForm | undefined>;
  /**
   * The record as it was in a revision of that entity, named by its rev or
   * its metadataRev. A rev shared by metadata-only revisions names the latest
   * of them. One indexed row, whatever the length of the history.
   */
  atRevision(ref: EntityRef, revisionId: string): Promise<EntityRecord | undefined>;
  /**
   * One page of a record's revisions, newest first, with how many it has;
   * undefined when there is no such record. Served by the index on
   * revision (entity_id, seq).
   */
  revisions(ref: EntityRef, page: { offset: number; limit: number }): Promise<RevisionList | undefined>;
}

/** A revision as a record's history lists it. */
export interface RevisionSummary {
  /** The revision's own id (metadataRev). */
  metadataRev: string;
  rev: string;
  prevRev?: string;
  /** False for a revision that changed metadata only (participants, issues). */
  contentChanged: boolean;
  createdAt: string;
  userName?: string;
}

export interface RevisionList {
  entityId: number;
  total: number;
  revisions: RevisionSummary[];
}

/**
 * A record's current form: its stored v2 document, or the record where none
 * is stored (or the same statement read records for others). The document
 * comes as it is stored, its UTF-8 bytes one character a byte (db/document-bytes.ts):
 * written to the socket as `latin1`, a copy.
 */
export type CurrentForm = { documentBytes: string; record?: undefined } | { record: EntityRecord; documentBytes?: undefined };

export function recordRepository(pool: pg.Pool): RecordRepository {
  let pending: PendingReads | undefined;
  let inFlight = false;
  // After the poll phase of this turn (every request it read has asked), unless a statement is in flight.
  const send = () => {
    const reads = pending;
    if (reads === undefined || inFlight) return;
    pending = undefined;
    inFlight = true;
    void readTogether(pool, reads).finally(() => {
      inFlight = false;
      // The answer came in a poll phase: the requests read in it join those that waited.
      if (pending !== undefined) setImmediate(send);
    });
  };
  const read = <T>(ref: EntityRef, document: boolean) => {
    let reads = pending;
    if (reads === undefined) {
      reads = pending = { byId: new Map(), byUuid: new Map(), records: false };
      if (!inFlight) setImmediate(send);
    }
    if (!document) reads.records = true;
    const [waiting, key] = ref.entityId !== undefined ? [reads.byId, String(ref.entityId)] : [reads.byUuid, ref.entityUuid!];
    return new Promise<T | undefined>((resolve, reject) => {
      const waiter = { document, resolve, reject } as Waiter;
      const others = waiting.get(key);
      if (others) others.push(waiter);
      else waiting.set(key, [waiter]);
    });
  };
  return {
    current: (ref) => read<EntityRecord>(ref, false),
    currentDocument: (ref) => read<CurrentForm>(ref, true),
    atRevision: (ref, revisionId) => recordAtRevision(pool, ref, revisionId),
    revisions: (ref, page) => revisionsOf(pool, ref, page),
  };
}

/** A row of a statement of current reads: the record, the document, or both (of each, what the statement asked for). */
interface CurrentRow {
  record: EntityRecord | null;
  document_bytes?: string | null;
}

/** A read: of the record (current()), or of the document where one is stored (currentDocument()). */
type Waiter = (
  | { document: false; resolve: (record: EntityRecord | undefined) => void }
  | { document: true; resolve: (form: CurrentForm | undefined) => void }
) & {
  reject: (error: unknown) => void;
};

/** What a waiter is answered with, from its row. */
function answer(waiter: Waiter, row: CurrentRow): void {
  if (!waiter.document) waiter.resolve(row.record!);
  else
    waiter.resolve(
      row.document_bytes !== null && row.document_bytes !== undefined ? { documentBytes: row.document_bytes } : { record: row.record! },
    );
}

/** The reads of this turn not yet sent, by entity number and by UUID (lower case). */
interface PendingReads {
  byId: Map<string, Waiter[]>;
  byUuid: Map<string, Waiter[]>;
  /** Whether any of them needs the record itself (current()), not the document where one is stored. */
  records: boolean;
}

// The statements of current reads, named so that each pooled connection
// parses and plans them once (the hottest reads of the service). When every
// read of a statement takes the stored document, the record is sent only for
// rows without one (a CASE does not detoast a column it does not return);
// when any needs the record, every row sends its record and those reading the
// document build it from that record (the same bytes). Reads by number
// alone (what a client of the change feed sends) take a plain index scan of
// the primary key: `id = any(…) or uuid = any(…)` is a BitmapOr of two index
// scans and a bitmap heap scan, which cost PostgreSQL about a fifth more
// per statement (pgbench, 3 ids a statement).
const COLUMNS = {
  records: 'record',
  documents: 'document_bytes, case when document_bytes is null then record end as record',
} as const;
const FILTERS = {
  both: { columns: 'id, uuid', where: 'id = any($1::bigint[]) or uuid = any($2::uuid[])' },
  ids: { columns: 'id', where: 'id = any($1::bigint[])' },
  uuids: { columns: 'uuid', where: 'uuid = any($1::uuid[])' },
} as const;
type Filter = keyof typeof FILTERS;
export const CURRENT_READS = Object.fromEntries(
  (Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]).flatMap((form) =>
    (Object.keys(FILTERS) as Filter[]).map((filter) => [
      `${form}-${filter}`,
      {
        name: `current-${form}-by-${filter}`,
        text: `select ${FILTERS[filter].columns}, ${COLUMNS[form]} from entity where ${FILTERS[filter].where}`,
      },
    ]),
  ),
) as Record<`${keyof typeof COLUMNS}-${Filter}`, { name: string; text: string }>;

/** Refs per statement: a burst of thousands of GETs becomes a few statements, not one unbounded one. */
const REFS_PER_STATEMENT = 500;

async function readTogether(pool: pg.Pool, reads: PendingReads): Promise<void> {
  const ids = [...reads.byId.keys()];
  const uuids = [...reads.byUuid.keys()];
  const statements: Promise<void>[] = [];
  for (let at = 0; at < ids.length + uuids.length; at += REFS_PER_STATEMENT) {
    const someIds = ids.slice(at, at + REFS_PER_STATEMENT);
    const someUuids = uuids.slice(Math.max(0, at - ids.length), Math.max(0, at + REFS_PER_STATEMENT - ids.length));
    statements.push(readSome(pool, reads, someIds, someUuids));
  }
  await Promise.all(statements);
}

async function readSome(pool: pg.Pool, reads: PendingReads, ids: string[], uuids: string[]): Promise<void> {
  const waiters = [...ids.map((id) => reads.byId.get(id)!), ...uuids.map((uuid) => reads.byUuid.get(uuid)!)].flat();
  try {
    const filter: Filter = uuids.length === 0 ? 'ids' : ids.length === 0 ? 'uuids' : 'both';
    const values = filter === 'ids' ? [ids] : filter === 'uuids' ? [uuids] : [ids, uuids];
    const statement = CURRENT_READS[`${reads.records ? 'records' : 'documents'}-${filter}`];
    const { rows } = await pool.query<CurrentRow & { id?: string; uuid?: string }>({ ...statement, values });
    const found = new Set<Waiter[]>();
    for (const row of rows) {
      for (const waiting of [
        row.id === undefined ? undefined : reads.byId.get(String(row.id)),
        row.uuid === undefined ? undefined : reads.byUuid.get(row.uuid),
      ]) {
        if (waiting === undefined || found.has(waiting)) continue;
        found.add(waiting);
        for (const waiter of waiting) answer(waiter, row);
      }
    }
    // Those no row answered name no record.
    for (const waiter of waiters) waiter.resolve(undefined);
  } catch (error) {
    for (const waiter of waiters) waiter.reject(error);
  }
}

async function recordAtRevision(pool: pg.Pool, ref: EntityRef, revisionId: string): Promise<EntityRecord | undefined> {
  const entityFilter = ref.entityId !== undefined ? 'e.id = $1' : 'e.uuid = $1';
  const { rows } = await pool.query<{ snapshot: EntityRecord }>(
    `select coalesce(r.snapshot, e.record) as snapshot from revision r join entity e on e.id = r.entity_id
      where ${entityFilter} and (r.uuid = $2 or r.rev = $2)
      order by r.seq desc limit 1`,
    [ref.entityId ?? ref.entityUuid, revisionId],
  );
  return rows[0]?.snapshot;
}

interface RevisionRow {
  entity_id: string;
  total: string;
  uuid: string | null;
  rev: string | null;
  prev_rev: string | null;
  content_changed: boolean | null;
  created_at: Date | null;
  user_name: string | null;
}

async function revisionsOf(pool: pg.Pool, ref: EntityRef, page: { offset: number; limit: number }): Promise<RevisionList | undefined> {
  const entityFilter = ref.entityId !== undefined ? 'id = $1' : 'uuid = $1';
  // The entity's row even past the last page (a left join), so that a page beyond the end is an empty list, not a missing record.
  const { rows } = await pool.query<RevisionRow>(
    `select e.id as entity_id, (select count(*) from revision c where c.entity_id = e.id) as total,
            r.uuid, r.rev, r.prev_rev, r.content_changed, r.created_at, r.user_name
       from (select id from entity where ${entityFilter}) e
       left join lateral (
         select uuid, rev, prev_rev, content_changed, created_at, user_name, seq from revision
          where entity_id = e.id order by seq desc, uuid desc offset $2 limit $3
       ) r on true
      order by r.seq desc, r.uuid desc`,
    [ref.entityId ?? ref.entityUuid, page.offset, page.limit],
  );
  const first = rows[0];
  if (first === undefined) return undefined;
  const revisions = rows
    .filter((row) => row.uuid !== null)
    .map((row) => ({
      metadataRev: row.uuid!,
      rev: row.rev!,
      ...(row.prev_rev !== null ? { prevRev: row.prev_rev } : {}),
      contentChanged: row.content_changed!,
      createdAt: new Date(row.created_at!).toISOString(),
      ...(row.user_name !== null ? { userName: row.user_name } : {}),
    }));
  return { entityId: Number(first.entity_id), total: Number(first.total), revisions };
}
