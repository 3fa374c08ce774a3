// A slice of a long document: a synthetic document made of pieces of the
// original (root start tag, header element, a run of top-level elements) and a
// closing root tag, with the map from its offsets back to the original's.

/** Where the bytes of a slice come from: `fixed` segments are synthetic and map to one original offset. */
export interface Segment {
  at: number;
  bytes: Uint8Array;
  origin: number;
  kind: 'original' | 'header' | 'fixed';
}

export interface Slice {
  index: number;
  segments: Segment[];
}

export function joined(slice: Slice): Uint8Array {
  return Buffer.concat(slice.segments.map((segment) => segment.bytes));
}

export function segmentAt(slice: Slice, offset: number): Segment | undefined {
  return slice.segments.findLast((segment) => segment.at <= offset);
}

export function originalOffset(slice: Slice, offset: number): number {
  const segment = segmentAt(slice, offset);
  if (segment === undefined) return 0;
  return segment.kind === 'fixed' ? segment.origin : segment.origin + Math.min(offset - segment.at, segment.bytes.length);
}
