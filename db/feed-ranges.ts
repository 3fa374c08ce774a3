import type pg from 'pg';
import { extendLayout, type KeptPrefix } from './feed-range-extension.ts';
import { GAPS_LISTED, type AnchoredLayout, type CommitRange, type RangeLayout } from './feed-range-layout.ts';
import { inTransaction, type Queryable } from './sql.ts';

// How a page of the change feed finds its start without sorting the whole
// range again (docs/decisions: "Feed pages at the cost of the page").
//
// A range (from, to] of committed transactions is closed: nothing can join it
// later, since commit_seq is drawn at commit. Its changed records sorted by
// entity id are therefore fixed, and one pass over them records their count
// and an anchor (entity id) at every anchorEvery-th position (1,000 by
// default: a page then reads at most that many records it does not send). A page at any
// offset then reads only the ids between the anchors around it. The layout
// is kept in PostgreSQL for every API process, an anchor a row of
// feed_range_anchor, so that a page reads only the two around it, whatever
// the range's size; a range nobody kept (a cold page) costs that one pass.
//
// Which revisions belong to the range: those whose transaction committed in
// it. The range's transactions have seqs in [minSeq, maxSeq]; the seqs in
// there that are not the range's (committed outside it, still in flight when
// the layout was made, or rolled back) are listed as gaps. Sequence values
// are never handed out twice, so "seq in [minSeq, maxSeq] and not a gap" is
// exactly "committed in the range", and a page can read revisions by their
// (entity_id, seq) index without joining transaction. With more gaps than
// GAPS_LISTED the pages join transaction instead.

/** Where one page's rows lie: entity ids in (afterId, upToId], of which the first `skip` belong to the pages before. */
export interface PageBounds {
  afterId: string;
  upToId: string;
  skip: number;
}

export interface LayoutOptions {
  /** Records between two anchors. */
  anchorEvery: number;
  /** Days a kept layout is kept. */
  retentionDays: number;
}

/** A range's layout, and where each of its pages lies. */
export interface LaidOutRange {
  layout: RangeLayout;
  /** The entity-id bounds of the rows at [offset, offset + limit); undefined when the page lies past the end. */
  pageBounds(offset: number, limit: number): Promise<PageBounds | undefined>;
}

/** The range's layout as kept, or made now (one pass) and kept when it holds more than `keepAbove` records. */
export async function rangeLayout(pool: pg.Pool, range: CommitRange, keepAbove: number, options: LayoutOptions): Promise<LaidOutRange> {
  const kept = await keptLayout(pool, range);
  if (kept) return keptRange(pool, range, kept, options);
  const made = await inTransaction(pool, async (client): Promise<RangeLayout | AnchoredLayout> => {
    // Two API processes asked for the same cold range: one makes it, the other waits and reads it.
    await client.query(`select pg_advisory_xact_lock(hashtextextended('feed_range:' || $1 || ':' || $2, 0))`, [
      range.fromCommitSeq,
      range.toCommitSeq,
    ]);
    const keptMeanwhile = await keptLayout(client, range);
    if (keptMeanwhile) return keptMeanwhile;
    const prefix = await keptPrefix(client, range);
    const layout =
      (prefix && (await extendLayout(client, range, prefix, options.anchorEvery))) ??
      (await makeLayout(client, range, options.anchorEvery));
    if (layout.records > keepAbove) await keepLayout(client, range, layout, options.retentionDays);
    return layout;
  });
  return 'anchors' in made ? anchoredRange(made) : keptRange(pool, range, made, options);
}

/** A range whose anchors are at hand. */
function anchoredRange(layout: AnchoredLayout): LaidOutRange {
  return { layout, pageBounds: async (offset, limit) => boundsAmongAnchors(layout, offset, limit) };
}

/** A kept range: each page reads the two anchors around it by their key. */
function keptRange(pool: pg.Pool, range: CommitRange, layout: RangeLayout, options: LayoutOptions): LaidOutRange {
  return {
    layout,
    async pageBounds(offset, limit) {
      if (offset >= layout.records || limit <= 0) return undefined;
      const end = Math.min(offset + limit, layout.records);
      const { rows } = await pool.query<{ before_position: string | null; after_id: string | null; up_to_id: string | null }>(
        `select before.position as before_position, before.entity_id as after_id,
                (select entity_id from feed_range_anchor
                  where from_commit_seq = $1 and to_commit_seq = $2 and position >= $4 order by position limit 1) as up_to_id
           from (values (0)) as one
           left join lateral (select position, entity_id from feed_range_anchor
                               where from_commit_seq = $1 and to_commit_seq = $2 and position <= $3
                               order by position desc limit 1) before on true`,
        [range.fromCommitSeq, range.toCommitSeq, offset, end],
      );
      const row = rows[0]!;
      // Retention dropped the kept layout since this request read it: lay the range out again, for this page only.
      if (row.up_to_id === null) return boundsAmongAnchors(await makeLayout(pool, range, options.anchorEvery), offset, limit);
      return {
        afterId: row.after_id ?? '-1',
        upToId: row.up_to_id,
        skip: offset - Number(row.before_position ?? 0),
      };
    },
  };
}

function boundsAmongAnchors(layout: AnchoredLayout, offset: number, limit: number): PageBounds | undefined {
  if (offset >= layout.records || limit <= 0) return undefined;
  const { ids, positions } = layout.anchors;
  const before = lastAtOrBefore(positions, offset);
  const afterId = before < 0 ? '-1' : ids[before]!;
  const skip = offset - (before < 0 ? 0 : positions[before]!);
  const end = Math.min(offset + limit, layout.records);
  return { afterId, upToId: ids[firstAtOrAfter(positions, end)]!, skip };
}

/**
 * The SQL and parameters of one page: the latest revision in the range of
 * each record with an entity id in the page's bounds, by entity id. Read by
 * the (entity_id, seq) index when the range's seqs are known exactly and the
 * records are dense in the bounds, else from the range's transactions.
 * The entity bounds are given for both tables, so that the planner reads
 * the page's entities as one range instead of probing one per revision.
 */
export function pageQuery(range: CommitRange, layout: RangeLayout, bounds: PageBounds, limit: number): { sql: string; params: unknown[] } {
  const select = 'select distinct on (r.entity_id) r.entity_id, e.uuid as entity_uuid, r.rev, r.metadata_rev';
  const order = 'order by r.entity_id, r.seq desc';
  const idsInBounds = Number(BigInt(bounds.upToId) - BigInt(bounds.afterId));
  const sparse = layout.revisions < idsInBounds;
  if (layout.gapSeqs !== null && !sparse) {
    return {
      sql: `${select}
              from revision r join entity e on e.id = r.entity_id
             where r.entity_id > $1 and r.entity_id <= $2 and e.id > $1 and e.id <= $2
               and r.seq between $3 and $4 and r.seq <> all($5::bigint[])
             ${order} offset $6 limit $7`,
      params: [bounds.afterId, bounds.upToId, layout.minSeq, layout.maxSeq, layout.gapSeqs, bounds.skip, limit],
    };
  }
  return {
    sql: `${select}
            from transaction t join revision r on r.seq = t.seq join entity e on e.id = r.entity_id
           where t.commit_seq > $1 and t.commit_seq <= $2 and r.entity_id > $3 and r.entity_id <= $4
           ${order} offset $5 limit $6`,
    params: [range.fromCommitSeq, range.toCommitSeq, bounds.afterId, bounds.upToId, bounds.skip, limit],
  };
}

interface LayoutRow {
  records: string;
  revisions: string;
  min_seq: string | null;
  max_seq: string | null;
  gap_seqs: string[] | null;
}

const LAYOUT_COLUMNS = 'records, revisions, min_seq, max_seq, gap_seqs';

async function keptLayout(db: Queryable, range: CommitRange): Promise<RangeLayout | undefined> {
  const { rows } = await db.query<LayoutRow>(`select ${LAYOUT_COLUMNS} from feed_range where from_commit_seq = $1 and to_commit_seq = $2`, [
    range.fromCommitSeq,
    range.toCommitSeq,
  ]);
  return rows[0] && layoutOf(rows[0]);
}

/** The kept layout of the longest range from the same transaction that ends before this one, anchors and all: what a client walking from there had laid out. */
async function keptPrefix(db: Queryable, range: CommitRange): Promise<KeptPrefix | undefined> {
  const { rows } = await db.query<LayoutRow & { to_commit_seq: string }>(
    `select to_commit_seq, ${LAYOUT_COLUMNS} from feed_range where from_commit_seq = $1 and to_commit_seq < $2 order by to_commit_seq desc limit 1`,
    [range.fromCommitSeq, range.toCommitSeq],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { rows: anchors } = await db.query<{ position: string; entity_id: string }>(
    'select position, entity_id from feed_range_anchor where from_commit_seq = $1 and to_commit_seq = $2 order by position',
    [range.fromCommitSeq, row.to_commit_seq],
  );
  return {
    toCommitSeq: row.to_commit_seq,
    layout: {
      ...layoutOf(row),
      anchors: { ids: anchors.map((anchor) => anchor.entity_id), positions: anchors.map((anchor) => Number(anchor.position)) },
    },
  };
}

function layoutOf(row: LayoutRow): RangeLayout {
  return {
    records: Number(row.records),
    revisions: Number(row.revisions),
    minSeq: row.min_seq,
    maxSeq: row.max_seq,
    gapSeqs: row.gap_seqs,
  };
}

async function keepLayout(db: Queryable, range: CommitRange, layout: AnchoredLayout, retentionDays: number): Promise<void> {
  // The anchors of the dropped layouts go with them (on delete cascade).
  await db.query('delete from feed_range where created_at < now() - make_interval(days => $1)', [retentionDays]);
  await db.query(
    `with kept as (
       insert into feed_range (from_commit_seq, to_commit_seq, records, revisions, min_seq, max_seq, gap_seqs)
       values ($1, $2, $3, $4, $5, $6, $7) on conflict do nothing
       returning from_commit_seq, to_commit_seq)
     insert into feed_range_anchor (from_commit_seq, to_commit_seq, position, entity_id)
     select kept.from_commit_seq, kept.to_commit_seq, anchor.position, anchor.entity_id
       from kept, unnest($8::bigint[], $9::bigint[]) as anchor (position, entity_id)`,
    [
      range.fromCommitSeq,
      range.toCommitSeq,
      layout.records,
      layout.revisions,
      layout.minSeq,
      layout.maxSeq,
      layout.gapSeqs,
      layout.anchors.positions,
      layout.anchors.ids,
    ],
  );
}

/** One pass over the range: its seqs, its gaps, and its records sorted by entity id with an anchor every `anchorEvery`. */
async function makeLayout(db: Queryable, range: CommitRange, anchorEvery: number): Promise<AnchoredLayout> {
  const inRange = 'commit_seq > $1 and commit_seq <= $2';
  const { rows: seqRows } = await db.query<{ lo: string | null; hi: string | null; n: string }>(
    `select min(seq) as lo, max(seq) as hi, count(*) as n from transaction where ${inRange}`,
    [range.fromCommitSeq, range.toCommitSeq],
  );
  const { lo, hi, n } = seqRows[0]!;
  if (lo === null || hi === null)
    return { records: 0, revisions: 0, minSeq: null, maxSeq: null, gapSeqs: [], anchors: { ids: [], positions: [] } };
  const gapCount = BigInt(hi) - BigInt(lo) + 1n - BigInt(n);
  let gapSeqs: string[] | null = null;
  if (gapCount <= BigInt(GAPS_LISTED)) {
    const { rows } = await db.query<{ seq: string }>(
      `select s as seq from generate_series($3::bigint, $4::bigint) s
        where not exists (select 1 from transaction t where t.seq = s and t.${inRange}) order by s`,
      [range.fromCommitSeq, range.toCommitSeq, lo, hi],
    );
    gapSeqs = rows.map((row) => row.seq);
  }
  const revisionsInRange =
    gapSeqs === null
      ? { sql: `transaction t join revision r on r.seq = t.seq where t.${inRange}`, params: [range.fromCommitSeq, range.toCommitSeq] }
      : { sql: 'revision r where r.seq between $1 and $2 and r.seq <> all($3::bigint[])', params: [lo, hi, gapSeqs] };
  const g = revisionsInRange.params.length + 1;
  // Running figures over the records in entity-id order (an ordered index scan, no sort), streamed:
  // the last record (nothing after it) carries the range's totals.
  const { rows: anchors } = await db.query<{ entity_id: string; n: string; revisions: string }>(
    `select entity_id, n, revisions from (
       select entity_id, row_number() over running as n, sum(revisions) over running as revisions, lead(entity_id) over running is null as last
         from (select r.entity_id, count(*) as revisions from ${revisionsInRange.sql} group by r.entity_id) per_record
       window running as (order by entity_id rows between unbounded preceding and current row)
     ) numbered
     where n % $${g} = 0 or last order by n`,
    [...revisionsInRange.params, anchorEvery],
  );
  const last = anchors.at(-1);
  return {
    records: Number(last?.n ?? 0),
    revisions: Number(last?.revisions ?? 0),
    minSeq: lo,
    maxSeq: hi,
    gapSeqs,
    anchors: { ids: anchors.map((row) => row.entity_id), positions: anchors.map((row) => Number(row.n)) },
  };
}

/** Index of the last position <= value, or -1. */
function lastAtOrBefore(positions: number[], value: number): number {
  let low = 0;
  let high = positions.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (positions[mid]! <= value) {
      found = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

/** Index of the first position >= value (positions end at the record count, which value never passes). */
function firstAtOrAfter(positions: number[], value: number): number {
  let low = 0;
  let high = positions.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (positions[mid]! >= value) high = mid;
    else low = mid + 1;
  }
  return low;
}
