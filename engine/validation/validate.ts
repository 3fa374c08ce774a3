// XSD validation of whole documents in bounded memory, as their bytes arrive.
//
// libxml2-wasm exposes only tree (DOM) validation (no push parser, no
// xmlTextReader), and a tree takes six to ten times the document's size. A
// long document is therefore validated in slices: each slice is the root
// start tag, the header element (batch info), a run of whole top-level
// elements and a closing root tag. The first slice holds the real prolog and
// the last one the real end, so every byte is parsed by libxml2 exactly once.
// A slice is validated as soon as its last element has arrived, and its bytes
// are then dropped: memory follows the slice (and the largest top-level
// element), not the document. What a slice cannot see is checked here:
// xs:ID values repeated across slices. (libxml2 never checks that an IDREF
// has its ID, so slicing loses nothing there.) Diagnostics are mapped back
// to the line and column of the original document.

import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { InvalidXmlError, SchemaViolationError, type XmlProblem } from '../../domain/errors.ts';
import { IdSet } from './id-set.ts';
import { loadEngine, type Diagnostic, type Libxml2Engine, type LoadedEngine } from './libxml2.ts';
import { lineStarts, offsetOf, positionsOf, type Position } from './positions.ts';
import { parseStartTag, startTagAttributes, type StartTag } from './root.ts';
import { startTagOffsets, walkTagsFrom, type Span } from './scan.ts';
import { joined, originalOffset, segmentAt, type Segment, type Slice } from './slices.ts';
import { VERSIONS, versionOfNamespace, type SchemaVersion } from './versions.ts';

export interface ValidateOptions {
  /** Deepest element nesting accepted, the root being level 1. libxml2 itself stops at 256. */
  maxDepth?: number;
  /** Schema errors listed; past this the rest of the document is only checked for well-formedness. */
  maxProblems?: number;
  /** Target size of a slice in bytes; peak memory follows it (and the largest top-level element). */
  sliceBytes?: number;
  /**
   * Largest top-level element (a change of a batch) accepted in a document validated in slices.
   * One element is never split, and its tree can take 30 times its size.
   */
  maxElementBytes?: number;
  /** Longest root start tag accepted: it is kept and repeated at the head of every slice. */
  maxRootTagBytes?: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;
const DEFAULTS: Required<ValidateOptions> = {
  maxDepth: 256,
  maxProblems: 1000,
  sliceBytes: 2 * MIB,
  maxElementBytes: 16 * MIB,
  maxRootTagBytes: 64 * KIB,
};

/** A wasm heap never shrinks; past this size the instance is dropped after use and a fresh one loaded. */
const RECYCLE_HEAP_BYTES = 256 * 1024 * 1024;

/** Bytes read before anything is judged: the encoding check needs the XML declaration. */
const HEAD_BYTES = 256;

const LT_BYTE = 0x3c;
const BANG_BYTE = 0x21;
const QUESTION_BYTE = 0x3f;

let current: Promise<LoadedEngine> | undefined;

function acquireEngine(): Promise<LoadedEngine> {
  if (current === undefined) {
    const files = new Map(Object.values(VERSIONS).map((info) => [info.version, info.schemaFile] as const));
    const loading = loadEngine(files).catch((error: unknown) => {
      if (current === loading) current = undefined;
      throw error;
    });
    current = loading;
  }
  return current;
}

function releaseEngine(loaded: LoadedEngine, from: Promise<LoadedEngine>): void {
  if (loaded.engine.heapBytes > RECYCLE_HEAP_BYTES && current === from) current = undefined;
}

const decoder = new TextDecoder();

const XML_DECLARED_ENCODING = /^(?:\u00ef\u00bb\u00bf)?<\?xml\s[^?]*?encoding\s*=\s*["']([^"']*)["']/;

function plainMessage(message: string, namespace: string): string {
  return message.replaceAll(`{${namespace}}`, '');
}

/** The version-independent facts of a document, once its root start tag has been read. */
interface RootFacts {
  span: Span;
  tag: StartTag;
  bytes: Uint8Array;
  version: SchemaVersion;
  /** The header element every slice repeats: a name, null (none), or undefined (the root is not sliceable). */
  headerName: string | null | undefined;
}

/** Bytes kept apart from the buffer (root tag, header), with the position of their first byte. */
interface Kept {
  span: Span;
  bytes: Uint8Array;
  at: Position;
}

interface Located {
  offset: number;
  line: number;
  column: number;
  message: string;
}

type Expectation = { kind: 'batch' } | { kind: 'document'; version: SchemaVersion };

/**
 * Validates one document fed in chunks (`push`), then `end`. Throws
 * InvalidXmlError as soon as the bytes are not a well-formed UTF-8 document
 * without a DTD, or a schema violation can no longer be listed; schema errors
 * are collected and thrown as one SchemaViolationError by `end`.
 */
export class DocumentValidator {
  readonly #expectation: Expectation;
  readonly #options: Required<ValidateOptions>;

  // The bytes not yet validated: absolute offsets [#bufStart, #bufStart + #length).
  #buf: Uint8Array = new Uint8Array(0);
  #owned = false;
  #length = 0;
  #bufStart = 0;
  /** Line and column of the byte at #bufStart. */
  #bufAt: Position = { line: 1, column: 1 };
  #received = 0;
  #scanFrom = 0;
  #headChecked = false;

  // The outline, as the scan finds it.
  #depth = 0;
  #rootSpan: Span | undefined;
  #rootClosed = false;
  #childStart = -1;
  #firstChildStart = -1;
  #firstChildTag: string | undefined;
  #firstChild: Span | undefined;
  #largest: Span | undefined;
  #childCount = 0;
  #lastCut = 0;
  #cuts: number[] = [];
  #refusal: { offset: number; message: string } | undefined;

  #root: RootFacts | undefined;
  #rootKept: Kept | undefined;
  #header: Kept | undefined;
  #slices = 0;
  #problems: Located[] = [];
  #capped = false;
  /** xs:ID values -> index of the first slice that holds each. */
  #ids = new IdSet();
  #engine: { from: Promise<LoadedEngine>; loaded: LoadedEngine } | undefined;
  #closed = false;

  constructor(expectation: Expectation, options: ValidateOptions = {}) {
    this.#expectation = expectation;
    this.#options = {
      maxDepth: options.maxDepth ?? DEFAULTS.maxDepth,
      maxProblems: options.maxProblems ?? DEFAULTS.maxProblems,
      sliceBytes: options.sliceBytes ?? DEFAULTS.sliceBytes,
      maxElementBytes: options.maxElementBytes ?? DEFAULTS.maxElementBytes,
      maxRootTagBytes: options.maxRootTagBytes ?? DEFAULTS.maxRootTagBytes,
    };
  }

  /** Top-level elements complete so far (a batch's header and its changes). */
  get childCount(): number {
    return this.#childCount;
  }

  /** Takes the next bytes of the document; validates every slice they complete. */
  async push(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    this.#append(chunk);
    if (!this.#headChecked && this.#received < HEAD_BYTES) return;
    await this.#advance(false);
  }

  /** Validates the rest; throws what is wrong with the document. */
  async end(): Promise<void> {
    try {
      await this.#advance(true);
      if (this.#rootSpan === undefined || this.#root === undefined) await this.#noRoot();
      await this.#validateSlice(this.#received, true);
      if (this.#problems.length > 0) throw this.#schemaViolation();
    } finally {
      this.close();
    }
  }

  /** Lets go of the engine; for a document abandoned before `end`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#engine) releaseEngine(this.#engine.loaded, this.#engine.from);
    this.#engine = undefined;
    this.#buf = new Uint8Array(0);
  }

  get version(): SchemaVersion | undefined {
    return this.#root?.version;
  }

  /** Whether a slice validated so far broke the schema: `end` will throw, listing every error found. */
  get hasSchemaErrors(): boolean {
    return this.#problems.length > 0;
  }

  get hasHeader(): boolean {
    const name = this.#root?.headerName;
    return typeof name === 'string' && this.#firstChildTag === name;
  }

  /** An unprefixed attribute of the header's start tag, as an XML parser reads it, once the header is complete. */
  headerAttribute(name: string): string | undefined {
    if (!this.hasHeader) return undefined;
    const header = this.#header?.bytes ?? (this.#firstChild && this.#bytesOf(this.#firstChild));
    return header === undefined ? undefined : startTagAttributes(header)?.[name];
  }

  #append(chunk: Uint8Array): void {
    this.#received += chunk.length;
    if (this.#length === 0) {
      this.#buf = chunk;
      this.#owned = false;
      this.#length = chunk.length;
      return;
    }
    const needed = this.#length + chunk.length;
    if (!this.#owned || needed > this.#buf.length) {
      const grown = new Uint8Array(Math.max(needed, this.#owned ? this.#buf.length * 2 : needed + chunk.length * 4));
      grown.set(this.#buf.subarray(0, this.#length));
      this.#buf = grown;
      this.#owned = true;
    }
    this.#buf.set(chunk, this.#length);
    this.#length = needed;
  }

  /** The buffered bytes [start, end) (absolute offsets). */
  #bytesOf(span: Span): Uint8Array {
    return this.#buf.subarray(span.start - this.#bufStart, span.end - this.#bufStart);
  }

  #bytes(): Uint8Array {
    return this.#buf.subarray(0, this.#length);
  }

  /** Drops the bytes before `offset`, keeping the position of the first byte kept. */
  #discard(offset: number): void {
    const count = offset - this.#bufStart;
    if (count <= 0) return;
    this.#bufAt = relative(this.#buf.subarray(0, count), this.#bufAt, [count])[0] as Position;
    const rest = this.#length - count;
    if (this.#owned && rest <= this.#buf.length / 4) {
      this.#buf.copyWithin(0, count, this.#length);
    } else {
      this.#buf = this.#buf.subarray(count, this.#length);
      this.#owned = false;
    }
    this.#length = rest;
    this.#bufStart = offset;
  }

  async #advance(final: boolean): Promise<void> {
    if (!this.#headChecked) {
      this.#headChecked = true;
      this.#refuseOtherEncodings();
    }
    this.#scan(final);
    if (this.#refusal) throw this.#invalidAt(this.#refusal.offset, this.#refusal.message);
    if (this.#rootSpan === undefined) {
      this.#refuseLongRootTag();
      this.#guard();
      return;
    }
    if (this.#root === undefined) {
      this.#refuseLongRootTag();
      await this.#readRoot();
    }
    const root = this.#root as RootFacts;
    if (root.headerName === undefined) return;
    const largest = this.#largest;
    if (largest !== undefined && largest.end - largest.start > this.#options.maxElementBytes) {
      const size = `${((largest.end - largest.start) / MIB).toFixed(1)} MiB`;
      throw this.#invalidAt(
        largest.start,
        `A top-level element of ${size} is larger than the ${(this.#options.maxElementBytes / MIB).toFixed(1)} MiB accepted`,
      );
    }
    this.#guard();
    // A cut at the very end is no cut: the document may end there (then the last slice ends it).
    while (this.#cuts.length > 0 && (this.#cuts[0] as number) < this.#received) {
      await this.#validateSlice(this.#cuts.shift() as number, false);
      await yieldToEventLoop();
    }
    if (final) this.#cuts = [];
  }

  /**
   * Refuses a root start tag over maxRootTagBytes, complete or still
   * arriving (the scan then waits at its '<'): it would be kept and parsed
   * again with every slice.
   */
  #refuseLongRootTag(): void {
    const { maxRootTagBytes } = this.#options;
    const span = this.#rootSpan;
    let start: number;
    if (span !== undefined) {
      if (span.end - span.start <= maxRootTagBytes) return;
      start = span.start;
    } else {
      const at = this.#scanFrom - this.#bufStart;
      const next = this.#buf[at + 1];
      const inStartTag = this.#buf[at] === LT_BYTE && at + 1 < this.#length && next !== BANG_BYTE && next !== QUESTION_BYTE;
      if (!inStartTag || this.#received - this.#scanFrom <= maxRootTagBytes) return;
      start = this.#scanFrom;
    }
    throw this.#invalidAt(start, `The root start tag is longer than the ${maxRootTagBytes / KIB} KiB accepted`);
  }

  /** Refuses a run of bytes that would have to be held whole: an element too large, or no element at all. */
  #guard(): void {
    const { maxElementBytes, sliceBytes } = this.#options;
    if (this.#root !== undefined && this.#root.headerName === undefined) return;
    const inChild = this.#depth >= 2 && this.#childStart >= 0;
    if (inChild && this.#received - this.#childStart > maxElementBytes) {
      throw this.#invalidAt(this.#childStart, `A top-level element is larger than the ${(maxElementBytes / MIB).toFixed(1)} MiB accepted`);
    }
    if (this.#received - this.#lastCut > sliceBytes + maxElementBytes + MIB) {
      const what = this.#rootSpan === undefined ? 'no root element' : 'no complete top-level element';
      throw this.#invalidAt(
        this.#scanFrom,
        `The document holds ${what} in more than ${((sliceBytes + maxElementBytes) / MIB).toFixed(1)} MiB`,
      );
    }
  }

  #refuseOtherEncodings(): void {
    const xml = this.#bytes();
    const [b0, b1] = xml;
    if ((b0 === 0xfe && b1 === 0xff) || (b0 === 0xff && b1 === 0xfe) || b0 === 0 || (xml.length > 1 && b1 === 0)) {
      throw this.#invalidAt(0, 'The document must be encoded in UTF-8 (it looks like UTF-16 or UTF-32)');
    }
    const head = Buffer.from(xml.buffer, xml.byteOffset, Math.min(xml.length, HEAD_BYTES)).toString('latin1');
    const declared = XML_DECLARED_ENCODING.exec(head)?.[1];
    if (declared !== undefined && !/^utf-?8$/i.test(declared)) {
      throw this.#invalidAt(0, `The document must be encoded in UTF-8, not ${declared}`);
    }
  }

  #scan(final: boolean): void {
    const base = this.#bufStart;
    const { maxDepth, sliceBytes } = this.#options;
    const topLevelEnded = (end: number): void => {
      this.#childCount += 1;
      if (this.#firstChild === undefined) this.#firstChild = { start: this.#firstChildStart, end };
      const largest = this.#largest;
      if (largest === undefined || end - this.#childStart > largest.end - largest.start) this.#largest = { start: this.#childStart, end };
      this.#childStart = -1;
      if (end - this.#lastCut >= sliceBytes) {
        this.#cuts.push(end);
        this.#lastCut = end;
      }
    };
    const resume = walkTagsFrom(
      this.#bytes(),
      this.#scanFrom - base,
      {
        startTag: (lt, gt, selfClosing) => {
          if (this.#depth + 1 > maxDepth) {
            this.#refusal = { offset: base + lt, message: `Elements are nested deeper than ${maxDepth} levels` };
            return false;
          }
          if (this.#rootSpan === undefined) {
            this.#rootSpan = { start: base + lt, end: base + gt + 1 };
            this.#rootClosed = selfClosing;
          } else if (this.#depth === 1 && !this.#rootClosed) {
            this.#childStart = base + lt;
            if (this.#firstChildStart < 0) {
              this.#firstChildStart = base + lt;
              this.#firstChildTag = parseStartTag(decoder.decode(this.#buf.subarray(lt, Math.min(gt + 1, lt + 512))))?.localName;
            }
          }
          if (!selfClosing) this.#depth++;
          else if (this.#depth === 1 && !this.#rootClosed) topLevelEnded(base + gt + 1);
          return true;
        },
        endTag: (_lt, gt) => {
          this.#depth = Math.max(0, this.#depth - 1);
          if (this.#depth === 1 && !this.#rootClosed) topLevelEnded(base + gt + 1);
          if (this.#depth === 0) this.#rootClosed = true;
          return true;
        },
        declaration: (lt) => {
          this.#refusal = {
            offset: base + lt,
            message: 'DTDs are not allowed: the document must not contain <!DOCTYPE> or other DTD markup',
          };
          return false;
        },
      },
      final,
    );
    if (resume >= 0) this.#scanFrom = base + resume;
  }

  async #engineNow(): Promise<LoadedEngine> {
    if (this.#engine === undefined) {
      const from = acquireEngine();
      this.#engine = { from, loaded: await from };
    }
    return this.#engine.loaded;
  }

  /** The root start tag: its version and whether the document may be sliced. */
  async #readRoot(): Promise<void> {
    const span = this.#rootSpan as Span;
    const tag = parseStartTag(decoder.decode(this.#bytesOf(span)));
    if (tag === undefined) {
      await this.#noRoot();
      return;
    }
    let version: SchemaVersion;
    if (this.#expectation.kind === 'document') {
      version = this.#expectation.version;
    } else {
      const found = versionOfNamespace(tag.namespace);
      if (found === undefined || tag.localName !== VERSIONS[found].batchRoot) {
        const name = `${tag.localName} (${tag.namespace ?? 'no namespace'})`;
        throw this.#invalidAt(
          span.start,
          `The root element must be batchUpdate (${VERSIONS.v2.namespace}) or bu (${VERSIONS.v1.namespace}), not ${name}`,
        );
      }
      version = found;
    }
    const info = VERSIONS[version];
    const headerName = tag.namespace === info.namespace ? info.sliceableRoots.get(tag.localName) : undefined;
    this.#root = { span, tag, bytes: this.#bytesOf(span).slice(), version, headerName };
  }

  /** A document without a readable root start tag: libxml2 diagnoses what there is. */
  async #noRoot(): Promise<never> {
    const { engine } = await this.#engineNow();
    const parsed = engine.parse([this.#bytes()]);
    if (parsed.ok) engine.freeDoc(parsed.doc);
    const error = parsed.ok ? undefined : parsed.errors[0];
    const at = { line: error?.line || 1, column: error?.column || 1 };
    const line = at.line === 1 ? this.#bufAt.line : this.#bufAt.line + at.line - 1;
    const column = at.line === 1 ? this.#bufAt.column + at.column - 1 : at.column;
    throw new InvalidXmlError([{ line, column, message: error?.message ?? 'The document has no root element' }]);
  }

  /** Builds, parses and validates the slice ending at `end`, then drops its bytes. */
  async #validateSlice(end: number, last: boolean): Promise<void> {
    const { engine, schemas } = await this.#engineNow();
    const root = this.#root as RootFacts;
    const info = VERSIONS[root.version];
    const index = this.#slices++;
    if (index === 0) {
      this.#rootKept = this.#keep(root.span);
      if (this.hasHeader && this.#firstChild) this.#header = this.#keep(this.#firstChild);
    }
    const slice = this.#slice(index, end, last, root);
    const doc = this.#parse(engine, slice);
    try {
      const validatesAll = root.headerName === null || this.hasHeader;
      if (!this.#capped && (index === 0 || validatesAll))
        this.#validate(engine, schemas.get(root.version) as number, slice, doc, info.namespace, info.idAttribute);
    } finally {
      engine.freeDoc(doc);
    }
    this.#discard(end);
  }

  #keep(span: Span): Kept {
    const bytes = this.#bytesOf(span).slice();
    return { span, bytes, at: this.#positionInBuffer(span.start) };
  }

  #slice(index: number, end: number, last: boolean, root: RootFacts): Slice {
    const pieces: Omit<Segment, 'at'>[] = [];
    if (index > 0) {
      pieces.push({ bytes: root.bytes, origin: root.span.start, kind: 'original' });
      if (this.#header) pieces.push({ bytes: this.#header.bytes, origin: this.#header.span.start, kind: 'header' });
    }
    pieces.push({ bytes: this.#bytesOf({ start: this.#bufStart, end }), origin: this.#bufStart, kind: 'original' });
    if (!last) pieces.push({ bytes: Buffer.from(`</${root.tag.qname}>`), origin: end, kind: 'fixed' });
    let at = 0;
    const segments = pieces.map((piece) => {
      const segment = { ...piece, at };
      at += piece.bytes.length;
      return segment;
    });
    return { index, segments };
  }

  /** The position of an absolute offset in the buffer, the root tag or the header. */
  #positionsOf(offsets: readonly number[]): Position[] {
    const inBuffer = offsets.filter((offset) => offset >= this.#bufStart);
    const buffered = relative(
      this.#bytes(),
      this.#bufAt,
      inBuffer.map((offset) => offset - this.#bufStart),
    );
    const found = new Map(inBuffer.map((offset, i) => [offset, buffered[i] as Position]));
    return offsets.map((offset) => {
      const position = found.get(offset);
      if (position !== undefined) return position;
      for (const kept of [this.#header, this.#rootKept]) {
        if (kept && offset >= kept.span.start && offset <= kept.span.end)
          return relative(kept.bytes, kept.at, [offset - kept.span.start])[0] as Position;
      }
      return this.#rootKept?.at ?? { line: 1, column: 1 };
    });
  }

  #positionInBuffer(offset: number): Position {
    return relative(this.#bytes(), this.#bufAt, [offset - this.#bufStart])[0] as Position;
  }

  #invalidAt(offset: number, message: string): InvalidXmlError {
    const [position] = this.#positionsOf([offset]);
    return new InvalidXmlError([{ line: position?.line ?? 1, column: position?.column ?? 1, message }]);
  }

  #parse(engine: Libxml2Engine, slice: Slice): number {
    const outcome = engine.parse(slice.segments.map((segment) => segment.bytes));
    if (outcome.ok) return outcome.doc;
    const [first] = outcome.errors;
    const bytes = joined(slice);
    const starts = lineStarts(bytes);
    const offset = first ? offsetOf(bytes, { line: Math.max(1, first.line), column: Math.max(1, first.column) }, starts) : 0;
    // Some messages name the line of an open tag ("... tag x line 5"); that line is in the slice, not the document.
    const message = (first?.message ?? 'Document is not well-formed').replace(/\bline (\d+)/g, (_text, line: string) => {
      const [position] = this.#positionsOf([originalOffset(slice, offsetOf(bytes, { line: Number(line), column: 1 }, starts))]);
      return `line ${position?.line ?? line}`;
    });
    throw this.#invalidAt(originalOffset(slice, offset), message);
  }

  #idsSeenEarlier(engine: Libxml2Engine, idAttribute: string, slice: Slice, doc: number, reported: ReadonlySet<number>): Diagnostic[] {
    const attribute = `@${idAttribute}`;
    // Later slices repeat the root tag and the header; their IDs belong to the first slice.
    // (XPaths with several context nodes, like /*/*/descendant::*, are quadratic in libxml2.)
    const repeated = new Set<number>();
    if (slice.index > 0) {
      repeated.add(engine.rootElement(doc));
      if (this.#header)
        for (const { element } of engine.attributeValues(doc, `/*/*[1]/descendant-or-self::*/${attribute}`)) repeated.add(element);
    }
    const duplicates: Diagnostic[] = [];
    for (const { value, element } of engine.attributeValues(doc, `//${attribute}`)) {
      if (repeated.has(element)) continue;
      const id = value.trim();
      const first = this.#ids.firstSlice(id, slice.index);
      if (first !== undefined && first !== slice.index && !reported.has(element)) {
        const message = `Element '${engine.elementName(element)}', attribute '${idAttribute}': the ID '${id}' is already used earlier in the document.`;
        duplicates.push({ message, line: 0, column: 0, element });
      }
    }
    return duplicates;
  }

  #validate(engine: Libxml2Engine, schema: number, slice: Slice, doc: number, namespace: string, idAttribute: string): void {
    const { maxProblems } = this.#options;
    const remaining = maxProblems - this.#problems.length;
    const { errors, total } = engine.validate(doc, schema, remaining);
    if (total > errors.length) this.#capped = true;
    const reported = new Set(errors.map((error) => error.element));
    // A document in one slice needs no cross-slice check: libxml2 saw every ID.
    const sliced = slice.index > 0 || slice.segments.at(-1)?.kind === 'fixed';
    const diagnostics = sliced ? [...errors, ...this.#idsSeenEarlier(engine, idAttribute, slice, doc, reported)] : errors;
    if (diagnostics.length === 0) return;

    const bytes = joined(slice);
    const ordinals = engine.elementOrdinals(doc, new Set(diagnostics.map((d) => d.element).filter((element) => element !== 0)));
    const tagOffsets = startTagOffsets(bytes, new Set(ordinals.values()));
    let starts: number[] | undefined;
    const found: { offset: number; message: string }[] = [];
    for (const diagnostic of diagnostics) {
      const ordinal = ordinals.get(diagnostic.element);
      const offset =
        (ordinal === undefined ? undefined : tagOffsets.get(ordinal)) ??
        offsetOf(bytes, { line: Math.max(1, diagnostic.line), column: 1 }, (starts ??= lineStarts(bytes)));
      // The header is repeated in every slice; its errors are reported by the first.
      if (slice.index > 0 && segmentAt(slice, offset)?.kind === 'header') continue;
      found.push({ offset: originalOffset(slice, offset), message: plainMessage(diagnostic.message, namespace) });
    }
    const positions = this.#positionsOf(found.map((problem) => problem.offset));
    found.forEach((problem, i) => this.#problems.push({ ...problem, line: positions[i]?.line ?? 1, column: positions[i]?.column ?? 1 }));
    if (this.#problems.length >= maxProblems) this.#capped = true;
  }

  #schemaViolation(): SchemaViolationError {
    const seen = new Set<string>();
    const unique = this.#problems
      .toSorted((a, b) => a.offset - b.offset)
      .filter(({ offset, message }) => !seen.has(`${offset}\u0000${message}`) && seen.add(`${offset}\u0000${message}`));
    const problems: XmlProblem[] = unique.map(({ line, column, message }) => ({ line, column, message }));
    const last = problems.at(-1);
    if (this.#capped && last) {
      problems.push({
        line: last.line,
        column: last.column,
        message: `More than ${this.#options.maxProblems} schema errors; the rest are not listed.`,
      });
    }
    return new SchemaViolationError(problems);
  }
}

/** The positions of offsets in `bytes`, whose first byte is at `at`, in one pass. */
function relative(bytes: Uint8Array, at: Position, offsets: readonly number[]): Position[] {
  return positionsOf(bytes, offsets).map((position) =>
    position.line === 1
      ? { line: at.line, column: at.column + position.column - 1 }
      : { line: at.line + position.line - 1, column: position.column },
  );
}

/**
 * Validates a change batch (root batchUpdate of v2 or bu of v1) against its schema.
 * Throws InvalidXmlError for anything that is not a well-formed UTF-8 batch without
 * a DTD, and SchemaViolationError listing the schema errors with their positions.
 */
export interface ValidatedBatch {
  version: SchemaVersion;
  /** Number of changes (createEntity / updateEntity elements), counted while validating. */
  changes: number;
  /** The batch UUID of the header (info/@uuid in v2, inf/@bid in v1), when the sender gave one. */
  batchUuid?: string;
}

/** A change batch validated as it arrives: `push` its bytes, then `end` for what it holds. */
export class BatchValidator {
  readonly #document: DocumentValidator;

  constructor(options: ValidateOptions = {}) {
    this.#document = new DocumentValidator({ kind: 'batch' }, options);
  }

  push(chunk: Uint8Array): Promise<void> {
    return this.#document.push(chunk);
  }

  /** The batch's version, once its root start tag has been read. */
  get version(): SchemaVersion | undefined {
    return this.#document.version;
  }

  /** Whether the batch is known to break the schema already (`end` will throw). */
  get hasSchemaErrors(): boolean {
    return this.#document.hasSchemaErrors;
  }

  /** Changes complete so far (a lower bound of the batch's changes while it arrives). */
  get changesSoFar(): number {
    const document = this.#document;
    return Math.max(0, document.childCount - (document.hasHeader ? 1 : 0));
  }

  async end(): Promise<ValidatedBatch> {
    const document = this.#document;
    await document.end();
    const version = document.version as SchemaVersion;
    const changes = document.childCount - (document.hasHeader ? 1 : 0);
    const batchUuid = document.headerAttribute(VERSIONS[version].batchIdAttribute);
    return batchUuid === undefined ? { version, changes } : { version, changes, batchUuid };
  }

  close(): void {
    this.#document.close();
  }
}

export async function validateBatchXml(xml: Uint8Array, options: ValidateOptions = {}): Promise<ValidatedBatch> {
  const validator = new BatchValidator(options);
  try {
    await validator.push(xml);
    return await validator.end();
  } finally {
    validator.close();
  }
}

/** Validates a document with any root element of the given version's schema (exports, results, records). */
export async function validateDocument(xml: Uint8Array, version: SchemaVersion, options: ValidateOptions = {}): Promise<void> {
  const validator = new DocumentValidator({ kind: 'document', version }, options);
  try {
    await validator.push(xml);
    await validator.end();
  } finally {
    validator.close();
  }
}
