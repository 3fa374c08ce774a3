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
   * The record as it was in a revision of that entity, named by its rev or
   * its metadataRev. A rev shared by metadata-only revisions names the latest
   * of them. One indexed row, whatever the length of the history.
   */
  atRevision(ref: EntityRef, revisionId: string): Promise<EntityRecord | undefined>;
}

export function recordRepository(pool: pg.Pool): RecordRepository {
  let pending: PendingReads | undefined;
  let inFlight = false;
  // After the poll phase of this turn (every request it read has asked), unless a statement is in flight.
  const send = () => {
    const reads = pending;
    if (reads === undefined || inFlight) return;
    pending = undefined;
    inFlight = true;
    void readTogether(pool, reads, () => {
      inFlight = false;
      // The reads asked meanwhile go out at once, before these answers are written: the API
      // writes them while PostgreSQL reads the next ones, not one after the other.
      send();
    });
  };
  return {
    current(ref) {
      let reads = pending;
      if (reads === undefined) {
        reads = pending = { byId: new Map(), byUuid: new Map() };
        if (!inFlight) setImmediate(send);
      }
      const [waiting, key] = ref.entityId !== undefined ? [reads.byId, String(ref.entityId)] : [reads.byUuid, ref.entityUuid!];
      return new Promise((resolve, reject) => {
        const waiter = { resolve, reject };
        const others = waiting.get(key);
        if (others) others.push(waiter);
        else waiting.set(key, [waiter]);
      });
    },
    atRevision: (ref, revisionId) => recordAtRevision(pool, ref, revisionId),
  };
}

interface Waiter {
  resolve: (record: EntityRecord | undefined) => void;
  reject: (error: unknown) => void;
}

/** The reads of this turn not yet sent, by entity number and by UUID (lower case). */
interface PendingReads {
  byId: Map<string, Waiter[]>;
  byUuid: Map<string, Waiter[]>;
}

/** Refs per statement: a burst of thousands of GETs becomes a few statements, not one unbounded one. */
const REFS_PER_STATEMENT = 500;

type CurrentRow = { id: string; uuid: string; record: EntityRecord };

/**
 * The reads as statements of at most REFS_PER_STATEMENT refs. Once every
 * statement has its rows (or failed), `answered` is called, and then each
 * waiter gets its record.
 */
async function readTogether(pool: pg.Pool, reads: PendingReads, answered: () => void): Promise<void> {
  const ids = [...reads.byId.keys()];
  const uuids = [...reads.byUuid.keys()];
  const chunks: { ids: string[]; uuids: string[] }[] = [];
  for (let at = 0; at < ids.length + uuids.length; at += REFS_PER_STATEMENT) {
    chunks.push({
      ids: ids.slice(at, at + REFS_PER_STATEMENT),
      uuids: uuids.slice(Math.max(0, at - ids.length), Math.max(0, at + REFS_PER_STATEMENT - ids.length)),
    });
  }
  const outcomes = await Promise.allSettled(chunks.map((chunk) => selectCurrent(pool, chunk.ids, chunk.uuids)));
  answered();
  for (const [index, outcome] of outcomes.entries()) {
    const chunk = chunks[index]!;
    const waiters = [...chunk.ids.map((id) => reads.byId.get(id)!), ...chunk.uuids.map((uuid) => reads.byUuid.get(uuid)!)].flat();
    if (outcome.status === 'rejected') {
      for (const waiter of waiters) waiter.reject(outcome.reason);
      continue;
    }
    const found = new Set<Waiter[]>();
    for (const row of outcome.value) {
      for (const waiting of [reads.byId.get(String(row.id)), reads.byUuid.get(row.uuid)]) {
        if (waiting === undefined || found.has(waiting)) continue;
        found.add(waiting);
        for (const waiter of waiting) waiter.resolve(row.record);
      }
    }
    // Those no row answered name no record.
    for (const waiter of waiters) waiter.resolve(undefined);
  }
}

async function selectCurrent(pool: pg.Pool, ids: string[], uuids: string[]): Promise<CurrentRow[]> {
  // Named, so each pooled connection parses and plans it once: the hottest read of the service.
  const { rows } = await pool.query<CurrentRow>({
    name: 'current-records',
    text: 'select id, uuid, record from entity where id = any($1::bigint[]) or uuid = any($2::uuid[])',
    values: [ids, uuids],
  });
  return rows;
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
