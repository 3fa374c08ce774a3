// A slice of a long document: a synthetic document made of pieces of the
// original (root start tag, header element, a run of top-level elements) and a
// closing root tag, with the map from its offsets back to the original's.

import type { Span } from './scan.ts';

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

export function planSlices(xml: Uint8Array, root: Span, header: Span | undefined, cuts: readonly number[], rootQName: string): Slice[] {
  const starts = [0, ...cuts.filter((cut) => cut < xml.length)];
  const closeTag = Buffer.from(`</${rootQName}>`);
  return starts.map((start, index) => {
    const end = starts[index + 1] ?? xml.length;
    const pieces: Omit<Segment, 'at'>[] = [];
    if (index > 0) {
      pieces.push({ bytes: xml.subarray(root.start, root.end), origin: root.start, kind: 'original' });
      if (header) pieces.push({ bytes: xml.subarray(header.start, header.end), origin: header.start, kind: 'header' });
    }
    pieces.push({ bytes: xml.subarray(start, end), origin: start, kind: 'original' });
    if (end < xml.length) pieces.push({ bytes: closeTag, origin: end, kind: 'fixed' });
    let at = 0;
    const segments = pieces.map((piece) => {
      const segment = { ...piece, at };
      at += piece.bytes.length;
      return segment;
    });
    return { index, segments };
  });
}
