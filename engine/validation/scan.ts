// A fast pass over the raw bytes, before libxml2 sees them (as they arrive):
// the validator refuses DTDs and deep nesting with it, finds the root element,
// and marks where the document can be cut into slices of whole top-level
// elements. It relies on libxml2 for
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
function walkTags(bytes: Uint8Array, visitor: TagVisitor): void {
  walkTagsFrom(bytes, 0, visitor, true);
}

/**
 * walkTags from `from`, for bytes that are still arriving: unless `final`,
 * a construct cut off by the end of `bytes` is left for the next call.
 * Returns where to resume (the `<` of that construct, or the end), or -1
 * when the visitor stopped the walk.
 */
export function walkTagsFrom(bytes: Uint8Array, from: number, visitor: TagVisitor, final: boolean): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.length;
  let pos = from;
  for (;;) {
    const lt = bytes.indexOf(LT, pos);
    if (lt < 0) return n;
    if (lt + 1 >= n) return lt;
    const next = bytes[lt + 1];
    if (next === SLASH) {
      const gt = bytes.indexOf(GT, lt + 2);
      if (gt < 0) return lt;
      if (!visitor.endTag(lt, gt)) return -1;
      pos = gt + 1;
    } else if (next === QUESTION) {
      const end = text.indexOf('?>', lt + 2);
      if (end < 0) return lt;
      pos = end + 2;
    } else if (next === BANG) {
      // `<!` or `<!-` at the end may still become a comment.
      if (!final && (lt + 2 >= n || (bytes[lt + 2] === DASH && lt + 3 >= n))) return lt;
      let end: number;
      if (bytes[lt + 2] === DASH && bytes[lt + 3] === DASH) end = text.indexOf('-->', lt + 4) + 3;
      else if (bytes[lt + 2] === LBRACKET) end = text.indexOf(']]>', lt + 3) + 3;
      else {
        visitor.declaration(lt);
        return -1;
      }
      if (end < 3) return lt;
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
      if (i >= n) return lt;
      if (!visitor.startTag(lt, i, bytes[i - 1] === SLASH)) return -1;
      pos = i + 1;
    }
  }
}

export interface Span {
  start: number;
  end: number;
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
