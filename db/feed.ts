import type pg from 'pg';
import { streamPages } from './cursor.ts';
import type { CommitRange, RangeLayout } from './feed-range-layout.ts';
import { pageQuery, rangeLayout, type LayoutOptions, type PageBounds } from './feed-ranges.ts';
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

/** A closed range (from, to] of the change feed, with what its pages need to find their start. */
interface FeedRange {
  from: TransactionPoint;
  to: TransactionPoint;
  /** Records changed in the range, each counted once. */
  records: number;
  layout: RangeLayout;
  /** Where the rows at [offset, offset + limit) lie, read where the layout is kept (the primary, when pages are read on a standby). */
  pageBounds(offset: number, limit: number): Promise<PageBounds | undefined>;
}

/** The change feed: committed transactions and the records they changed. */
export interface FeedRepository {
  /** The committed transaction with this UUID; undefined while it is not committed, or when there is none. */
  findTransaction(uuid: string): Promise<TransactionPoint | undefined>;
  /** The transaction committed last; undefined before the first. */
  latestTransaction(): Promise<TransactionPoint | undefined>;
  /**
   * The range (from, to]: as kept in PostgreSQL, or made by one pass over it
   * and kept (for FEED_RANGE_RETENTION_DAYS) when it holds more than
   * `keepAbove` records, so that its later pages need no pass.
   */
  range(from: TransactionPoint, to: TransactionPoint, keepAbove: number): Promise<FeedRange>;
  /**
   * Each record changed in the range once, with its latest rev and
   * metadataRev in it, ordered by entityId so pages are stable; the rows at
   * [offset, offset + limit). A page costs its own size, not the range's.
   * A record's revisions are in seq order as in commit order (a batch locks
   * the records it updates before it takes its seq). Streamed from a cursor:
   * memory does not grow with the page size. Yielded a cursor read at a time.
   */
  streamRange(range: FeedRange, offset: number, limit: number): AsyncGenerator<RevisionPointer[]>;
}

/** Pointers are small: few round trips for a page of 50,000. */
const ROWS_PER_READ = 5000;

/** A page of 50,000 pointers sorts in about 4 MB, PostgreSQL's default work_mem: in memory, not on disk. */
async function sortInMemory(client: pg.PoolClient): Promise<void> {
  await client.query(`set local work_mem = '16MB'`);
}

interface PointerRow {
  entity_id: string;
  entity_uuid: string;
  rev: string;
  metadata_rev: string;
}

export function feedRepository(pool: pg.Pool, options: LayoutOptions): FeedRepository {
  return {
    async findTransaction(uuid) {
      const { rows } = await pool.query<TransactionPoint>(
        'select uuid, commit_seq as "commitSeq" from transaction where uuid = $1 and commit_seq is not null',
        [uuid],
      );
      return rows[0];
    },

    async latestTransaction() {
      const { rows } = await pool.query<TransactionPoint>(
        'select uuid, commit_seq as "commitSeq" from transaction where commit_seq is not null order by commit_seq desc limit 1',
      );
      return rows[0];
    },

    async range(from, to, keepAbove) {
      const { layout, pageBounds } = await rangeLayout(pool, commitRange(from, to), keepAbove, options);
      return { from, to, records: layout.records, layout, pageBounds };
    },

    async *streamRange(range, offset, limit) {
      const bounds = await range.pageBounds(offset, limit);
      if (!bounds) return;
      const query = pageQuery(commitRange(range.from, range.to), range.layout, bounds, limit);
      for await (const rows of streamPages<PointerRow>(pool, query.sql, query.params, ROWS_PER_READ, sortInMemory)) {
        yield rows.map((row) => ({
          entityId: Number(row.entity_id),
          entityUuid: row.entity_uuid,
          rev: row.rev,
          metadataRev: row.metadata_rev,
        }));
      }
    },
  };
}

function commitRange(from: TransactionPoint, to: TransactionPoint): CommitRange {
  return { fromCommitSeq: from.commitSeq, toCommitSeq: to.commitSeq };
}
