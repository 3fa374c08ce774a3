// The layout of a closed range of the change feed: what its pages need to
// find their start (db/feed-ranges.ts makes and reads it).

/** Gaps listed in a layout; with more, its pages join transaction. */
export const GAPS_LISTED = 256;

export interface CommitRange {
  /** commit_seq of the transaction the range starts after. */
  fromCommitSeq: string;
  /** commit_seq of the last transaction in the range. */
  toCommitSeq: string;
}

export interface RangeLayout {
  /** Records changed in the range, each once. */
  records: number;
  /** Revisions in the range. */
  revisions: number;
  minSeq: string | null;
  maxSeq: string | null;
  /** Seqs in [minSeq, maxSeq] not committed in the range; null when there are more than GAPS_LISTED. */
  gapSeqs: string[] | null;
}

/** Entity ids at positions (1-based positions in the range's records by entity id, ascending, the last one included). */
export interface Anchors {
  ids: string[];
  positions: number[];
}

/** A layout with its anchors at hand: made by a pass or an extension, or a kept prefix read whole to be extended. */
export interface AnchoredLayout extends RangeLayout {
  anchors: Anchors;
}
