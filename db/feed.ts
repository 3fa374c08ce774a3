import type pg from 'pg';
import { streamRows } from './cursor.ts';
import type { RevisionPointer } from '../domain/model.ts';

// A point of the change feed is a committed transaction, placed by its
// commit_seq: the order in which transactions became visible, not the order
// in which they began (Migration20261124000040CommitOrder). Every transaction
// numbered up to the highest visible commit_seq is visible too, so a client
// that keeps `to` and asks from it next time misses nothing.

export interface TransactionPoint {
  uuid: string;
  /** Its place in commit order. */
  commitSeq: string;
}

/** The change feed: committed transactions and the records they changed. */
export interface FeedRepository {
  /** The committed transaction with this UUID; undefined while it is not committed, or when there is none. */
  findTransaction(uuid: string): Promise<TransactionPoint | undefined>;
  /** The transaction committed last; undefined before the first. */
  latestTransaction(): Promise<TransactionPoint | undefined>;
  /** Records changed in the transactions committed in (from, to], counted once each. */
  countChangedRecords(from: TransactionPoint, to: TransactionPoint): Promise<number>;
  /**
   * Each record changed in the transactions committed in (from, to] once,
   * with its latest rev and metadataRev in that range, ordered by entityId
   * so pages are stable. A record's revisions are in seq order as in commit
   * order (a batch locks the records it updates before it takes its seq).
   * Streamed from a cursor: memory does not grow with the page size.
   */
  streamChangedRecords(from: TransactionPoint, to: TransactionPoint, offset: number, limit: number): AsyncGenerator<RevisionPointer>;
}

/** The revisions (r) of the transactions (t) committed in ($1, $2]: each transaction's revisions by revision_seq_idx. */
const COMMITTED_BETWEEN = 'transaction t join revision r on r.seq = t.seq';
const COMMITTED_IN_RANGE = 't.commit_seq > $1 and t.commit_seq <= $2';

interface PointerRow {
  entity_id: string;
  entity_uuid: string;
  rev: string;
  metadata_rev: string;
}

export function feedRepository(pool: pg.Pool): FeedRepository {
  return {
    async findTransaction(uuid) {
      const { rows } = await pool.query<TransactionPoint>('select uuid, commit_seq as "commitSeq" from transaction where uuid = $1 and commit_seq is not null', [uuid]);
      return rows[0];
    },

    async latestTransaction() {
      const { rows } = await pool.query<TransactionPoint>('select uuid, commit_seq as "commitSeq" from transaction where commit_seq is not null order by commit_seq desc limit 1');
      return rows[0];
    },

    async countChangedRecords(from, to) {
      const { rows } = await pool.query<{ n: string }>(`select count(distinct r.entity_id) as n from ${COMMITTED_BETWEEN} where ${COMMITTED_IN_RANGE}`, [from.commitSeq, to.commitSeq]);
      return Number(rows[0]?.n ?? 0);
    },

    async *streamChangedRecords(from, to, offset, limit) {
      const rows = streamRows<PointerRow>(
        pool,
        `select distinct on (r.entity_id) r.entity_id, e.uuid as entity_uuid, r.rev, r.metadata_rev
           from ${COMMITTED_BETWEEN} join entity e on e.id = r.entity_id
          where ${COMMITTED_IN_RANGE}
          order by r.entity_id, r.seq desc
          offset $3 limit $4`,
        [from.commitSeq, to.commitSeq, offset, limit],
      );
      for await (const row of rows) {
        yield { entityId: Number(row.entity_id), entityUuid: row.entity_uuid, rev: row.rev, metadataRev: row.metadata_rev };
      }
    },
  };
}
