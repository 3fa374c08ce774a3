import type { Queryable } from './sql.ts';
import { GAPS_LISTED, type AnchoredLayout, type Anchors, type CommitRange, type RangeLayout } from './feed-range-layout.ts';

// A range (from, to] laid out from the kept layout of (from, to1], to1 < to,
// and what the transactions in (to1, to] changed: the cost of the added part,
// not of the whole range. This is what keeps `/updates/from/{mark}` from
// passing over a large range on every call while a client far behind (or a
// new client walking from genesis) asks again after new commits: its count
// stays exact, and its pages start from anchors as before.
//
// The records of (from, to] are those of (from, to1] and the records first
// changed in (to1, to]. An old anchor keeps its entity id and moves by the
// number of new records with smaller ids; new records beyond the last anchor
// get anchors of their own. The range's seq interval widens to take in the
// added transactions; its gaps are the old gaps still not in the range and
// the seqs the interval gained that are not in it.

export interface KeptPrefix {
  toCommitSeq: string;
  layout: AnchoredLayout;
}

/** Below this share of added records to kept ones, extending beats a fresh pass. */
const MOST_ADDED_SHARE = 0.5;
/** An extension that would spread two anchors further apart than this many times the spacing is made afresh instead. */
const WIDEST_SPACING = 4;
/** Seqs the widened interval may gain and have checked one by one. */
const MOST_NEW_SEQS = 100_000;

interface AddedRecord {
  entity_id: string;
  revisions: string;
  known: boolean;
}

/** The layout of `range` extended from `prefix`; undefined when a fresh pass is the better way (too much added, too many gaps). */
export async function extendLayout(
  db: Queryable,
  range: CommitRange,
  prefix: KeptPrefix,
  anchorEvery: number,
): Promise<AnchoredLayout | undefined> {
  const old = prefix.layout;
  if (old.gapSeqs === null || old.minSeq === null || old.maxSeq === null) return undefined;
  const added = { fromCommitSeq: prefix.toCommitSeq, toCommitSeq: range.toCommitSeq };
  const { rows: seqRows } = await db.query<{ lo: string | null; hi: string | null }>(
    'select min(seq) as lo, max(seq) as hi from transaction where commit_seq > $1 and commit_seq <= $2',
    [added.fromCommitSeq, added.toCommitSeq],
  );
  const { lo, hi } = seqRows[0]!;
  if (lo === null || hi === null) return old;
  const minSeq = BigInt(lo) < BigInt(old.minSeq) ? lo : old.minSeq;
  const maxSeq = BigInt(hi) > BigInt(old.maxSeq) ? hi : old.maxSeq;
  if (BigInt(maxSeq) - BigInt(old.maxSeq) + (BigInt(old.minSeq) - BigInt(minSeq)) > BigInt(MOST_NEW_SEQS)) return undefined;

  // The records the added transactions changed; known: changed in (from, to1] too (by the old interval and gaps).
  const { rows: records } = await db.query<AddedRecord>(
    `select d.entity_id, d.revisions,
            exists (select 1 from revision o where o.entity_id = d.entity_id and o.seq between $3 and $4 and o.seq <> all($5::bigint[])) as known
       from (select r.entity_id, count(*) as revisions
               from transaction t join revision r on r.seq = t.seq
              where t.commit_seq > $1 and t.commit_seq <= $2 group by r.entity_id) d
      order by d.entity_id`,
    [added.fromCommitSeq, added.toCommitSeq, old.minSeq, old.maxSeq, old.gapSeqs],
  );
  if (records.length > Math.max(anchorEvery, old.records * MOST_ADDED_SHARE)) return undefined;
  const newIds = records.filter((record) => !record.known).map((record) => BigInt(record.entity_id));
  const addedRevisions = records.reduce((sum, record) => sum + Number(record.revisions), 0);

  const anchors = shiftedAnchors(old, newIds, anchorEvery);
  if (!spacedWithin(anchors.positions, WIDEST_SPACING * anchorEvery)) return undefined;
  return {
    records: old.records + newIds.length,
    revisions: old.revisions + addedRevisions,
    minSeq,
    maxSeq,
    gapSeqs: await widenedGaps(db, range, old, minSeq, maxSeq),
    anchors,
  };
}

/** The old anchors moved past the new records below them, then anchors over the new records beyond the last old one. */
function shiftedAnchors(old: AnchoredLayout, newIds: bigint[], anchorEvery: number): Anchors {
  const ids: string[] = [];
  const positions: number[] = [];
  let below = 0;
  for (let index = 0; index < old.anchors.ids.length; index += 1) {
    const anchor = BigInt(old.anchors.ids[index]!);
    while (below < newIds.length && newIds[below]! < anchor) below += 1;
    ids.push(old.anchors.ids[index]!);
    positions.push(old.anchors.positions[index]! + below);
  }
  // Every record beyond the last old anchor is new: they are all known here.
  const total = old.records + newIds.length;
  const beyond = newIds.slice(below);
  for (let index = 0; index < beyond.length; index += 1) {
    const position = total - beyond.length + index + 1;
    if ((index + 1) % anchorEvery === 0 || index === beyond.length - 1) {
      ids.push(String(beyond[index]));
      positions.push(position);
    }
  }
  return { ids, positions };
}

function spacedWithin(positions: number[], widest: number): boolean {
  let previous = 0;
  for (const position of positions) {
    if (position - previous > widest) return false;
    previous = position;
  }
  return true;
}

/** Seqs of [minSeq, maxSeq] not committed in the range: the old gaps still outside it, and the interval's new seqs outside it. */
async function widenedGaps(db: Queryable, range: CommitRange, old: RangeLayout, minSeq: string, maxSeq: string): Promise<string[] | null> {
  const { rows } = await db.query<{ seq: string }>(
    `select s as seq from (
       select unnest($3::bigint[]) as s
       union all select generate_series($4::bigint, $5::bigint - 1)
       union all select generate_series($6::bigint + 1, $7::bigint)
     ) candidates
     where not exists (select 1 from transaction t where t.seq = candidates.s and t.commit_seq > $1 and t.commit_seq <= $2)
     order by s limit $8`,
    [range.fromCommitSeq, range.toCommitSeq, old.gapSeqs, minSeq, old.minSeq, old.maxSeq, maxSeq, GAPS_LISTED + 1],
  );
  return rows.length > GAPS_LISTED ? null : rows.map((row) => row.seq);
}
