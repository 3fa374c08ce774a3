// Byte offsets <-> 1-based line and column (columns count characters, as
// libxml2 does). Lines end at LF.

export interface Position {
  line: number;
  column: number;
}

const LF = 0x0a;

function charactersBetween(bytes: Uint8Array, start: number, end: number): number {
  let count = 0;
  for (let i = start; i < end; i++) {
    if (((bytes[i] as number) & 0xc0) !== 0x80) count++;
  }
  return count;
}

/** Positions of many offsets in one pass over the bytes up to the last of them. */
export function positionsOf(bytes: Uint8Array, offsets: readonly number[]): Position[] {
  const order = offsets.map((offset, index) => ({ offset: Math.max(0, Math.min(offset, bytes.length)), index }));
  order.sort((a, b) => a.offset - b.offset);
  const result = new Array<Position>(offsets.length);
  let line = 1;
  let lineStart = 0;
  // Characters counted so far on the current line, up to `counted`.
  let counted = 0;
  let characters = 0;
  for (const { offset, index } of order) {
    for (let lf = bytes.indexOf(LF, lineStart); lf >= 0 && lf < offset; lf = bytes.indexOf(LF, lineStart)) {
      line++;
      lineStart = lf + 1;
      counted = lineStart;
      characters = 0;
    }
    characters += charactersBetween(bytes, counted, offset);
    counted = offset;
    result[index] = { line, column: characters + 1 };
  }
  return result;
}

/** Offsets at which each line starts (index 0 is line 1). */
export function lineStarts(bytes: Uint8Array): number[] {
  const starts = [0];
  for (let lf = bytes.indexOf(LF); lf >= 0; lf = bytes.indexOf(LF, lf + 1)) starts.push(lf + 1);
  return starts;
}

/** The byte offset of a libxml2 line and column; clamped to the line's end and the document. */
export function offsetOf(bytes: Uint8Array, { line, column }: Position, starts: readonly number[] = lineStarts(bytes)): number {
  let offset = starts[Math.max(0, line - 1)] ?? bytes.length;
  for (let chars = 1; chars < column && offset < bytes.length && bytes[offset] !== LF; chars++) {
    offset++;
    while (offset < bytes.length && ((bytes[offset] as number) & 0xc0) === 0x80) offset++;
  }
  return offset;
}
