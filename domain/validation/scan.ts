// A fast pass over the raw bytes, before libxml2 sees them: it refuses DTDs
// and deep nesting, finds the root element, and marks where the document can
// be cut into slices of whole top-level elements. It relies on libxml2 for
// everything else: each slice is still parsed and validated in full, so a
// document the scan misreads is still rejected.

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const DASH = 0x2d;
const LBRACKET = 0x5b;

export interface TagVisitor {
  /** A start tag from `<` at `lt` to `>` at `gt`; return false to stop the walk. */
  startTag(lt: number, gt: number, selfClosing: boolean): boolean;
  endTag(lt: number, gt: number): boolean;
  /** `<!` markup that is neither a comment nor a CDATA section, i.e. DTD markup. */
  declaration(lt: number): boolean;
}

/** Calls the visitor for every tag in document order; stops at the first unterminated construct. */
export function walkTags(bytes: Uint8Array, visitor: TagVisitor): void {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.length;
  let pos = 0;
  for (;;) {
    const lt = bytes.indexOf(LT, pos);
    if (lt < 0 || lt + 1 >= n) return;
    const next = bytes[lt + 1];
    if (next === SLASH) {
      const gt = bytes.indexOf(GT, lt + 2);
      if (gt < 0 || !visitor.endTag(lt, gt)) return;
      pos = gt + 1;
    } else if (next === QUESTION) {
      const end = text.indexOf('?>', lt + 2);
      if (end < 0) return;
      pos = end + 2;
    } else if (next === BANG) {
      let end: number;
      if (bytes[lt + 2] === DASH && bytes[lt + 3] === DASH) end = text.indexOf('-->', lt + 4) + 3;
      else if (bytes[lt + 2] === LBRACKET) end = text.indexOf(']]>', lt + 3) + 3;
      else return void visitor.declaration(lt);
      if (end < 3) return;
      pos = end;
    } else {
      let i = lt + 1;
      let quote = 0;
      for (; i < n; i++) {
        const b = bytes[i];
        if (quote !== 0) {
          if (b === quote) quote = 0;
        } else if (b === GT) {
          break;
        } else if (b === DQUOTE || b === SQUOTE) {
          quote = b;
        }
      }
      if (i >= n || !visitor.startTag(lt, i, bytes[i - 1] === SLASH)) return;
      pos = i + 1;
    }
  }
}

export interface Span {
  start: number;
  end: number;
}

export interface Outline {
  /** The root start tag. */
  root?: Span;
  /** The first child element of the root. */
  firstChild?: Span;
  /** The largest child element of the root. */
  largestChild?: Span;
  /** Offsets where a slice ends: each just after a top-level element, at least `sliceBytes` after the previous cut. */
  cuts: number[];
  /** Number of child elements of the root (a batch's header and its changes). */
  childCount: number;
  /** A construct that is refused outright (DTD, nesting), at a byte offset. */
  refusal?: { offset: number; message: string };
}

export function outline(bytes: Uint8Array, maxDepth: number, sliceBytes: number): Outline {
  const result: Outline = { cuts: [], childCount: 0 };
  let depth = 0;
  let rootClosed = false;
  let firstChildStart = -1;
  let childStart = -1;
  let lastCut = 0;
  const topLevelEnded = (end: number): void => {
    result.childCount += 1;
    if (result.firstChild === undefined) result.firstChild = { start: firstChildStart, end };
    const largest = result.largestChild;
    if (largest === undefined || end - childStart > largest.end - largest.start) result.largestChild = { start: childStart, end };
    if (end - lastCut >= sliceBytes) {
      result.cuts.push(end);
      lastCut = end;
    }
  };
  walkTags(bytes, {
    startTag(lt, gt, selfClosing) {
      if (depth + 1 > maxDepth) {
        result.refusal = { offset: lt, message: `Elements are nested deeper than ${maxDepth} levels` };
        return false;
      }
      if (result.root === undefined) {
        result.root = { start: lt, end: gt + 1 };
        rootClosed = selfClosing;
      } else if (depth === 1 && !rootClosed) {
        childStart = lt;
        if (firstChildStart < 0) firstChildStart = lt;
      }
      if (!selfClosing) depth++;
      else if (depth === 1 && !rootClosed) topLevelEnded(gt + 1);
      return true;
    },
    endTag(_lt, gt) {
      depth = Math.max(0, depth - 1);
      if (depth === 1 && !rootClosed) topLevelEnded(gt + 1);
      if (depth === 0) rootClosed = true;
      return true;
    },
    declaration(lt) {
      result.refusal = { offset: lt, message: 'DTDs are not allowed: the document must not contain <!DOCTYPE> or other DTD markup' };
      return false;
    },
  });
  return result;
}

/** Byte offsets of the start tags with the given document-order numbers (0 = root). */
export function startTagOffsets(bytes: Uint8Array, ordinals: ReadonlySet<number>): Map<number, number> {
  const found = new Map<number, number>();
  let last = -1;
  for (const wanted of ordinals) last = Math.max(last, wanted);
  let ordinal = 0;
  walkTags(bytes, {
    startTag(lt) {
      if (ordinals.has(ordinal)) found.set(ordinal, lt);
      return ++ordinal <= last;
    },
    endTag: () => true,
    declaration: () => false,
  });
  return found;
}
