// XSD validation of whole documents in bounded memory.
//
// libxml2-wasm exposes only tree (DOM) validation, and a tree takes six to
// ten times the document's size. A long document is therefore validated in
// slices: each slice is the root start tag, the header element (batch info),
// a run of whole top-level elements and a closing root tag. The first slice
// holds the real prolog and the last one the real end, so every byte is
// parsed by libxml2 exactly once. What a slice cannot see is checked here:
// xs:ID values repeated across slices. (libxml2 never checks that an IDREF
// has its ID, so slicing loses nothing there.) Diagnostics are mapped back
// to the line and column of the original document.

import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { InvalidXmlError, SchemaViolationError, type XmlProblem } from '../errors.ts';
import { loadEngine, type Diagnostic, type Libxml2Engine, type LoadedEngine } from './libxml2.ts';
import { lineStarts, offsetOf, positionsOf } from './positions.ts';
import { parseStartTag, type StartTag } from './root.ts';
import { outline, startTagOffsets, type Outline, type Span } from './scan.ts';
import { joined, originalOffset, planSlices, segmentAt, type Slice } from './slices.ts';
import { VERSIONS, versionOfNamespace, type SchemaVersion, type VersionInfo } from './versions.ts';

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
}

const MIB = 1024 * 1024;
const DEFAULTS: Required<ValidateOptions> = { maxDepth: 256, maxProblems: 1000, sliceBytes: 2 * MIB, maxElementBytes: 16 * MIB };

/** A wasm heap never shrinks; past this size the instance is dropped after use and a fresh one loaded. */
const RECYCLE_HEAP_BYTES = 256 * 1024 * 1024;

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

interface Located {
  offset: number;
  message: string;
}

const decoder = new TextDecoder();

function problemAt(xml: Uint8Array, offset: number, message: string): XmlProblem {
  const [position] = positionsOf(xml, [offset]);
  return { line: position?.line ?? 1, column: position?.column ?? 1, message };
}

function invalid(xml: Uint8Array, offset: number, message: string): InvalidXmlError {
  return new InvalidXmlError([problemAt(xml, offset, message)]);
}

const XML_DECLARED_ENCODING = /^(?:\u00ef\u00bb\u00bf)?<\?xml\s[^?]*?encoding\s*=\s*["']([^"']*)["']/;

/** Only UTF-8 is accepted: libxml2 would silently transcode other declared encodings. */
function refuseOtherEncodings(xml: Uint8Array): void {
  const [b0, b1] = xml;
  if ((b0 === 0xfe && b1 === 0xff) || (b0 === 0xff && b1 === 0xfe) || b0 === 0 || (xml.length > 1 && b1 === 0)) {
    throw invalid(xml, 0, 'The document must be encoded in UTF-8 (it looks like UTF-16 or UTF-32)');
  }
  const head = Buffer.from(xml.buffer, xml.byteOffset, Math.min(xml.length, 256)).toString('latin1');
  const declared = XML_DECLARED_ENCODING.exec(head)?.[1];
  if (declared !== undefined && !/^utf-?8$/i.test(declared)) {
    throw invalid(xml, 0, `The document must be encoded in UTF-8, not ${declared}`);
  }
}

function startTagAt(xml: Uint8Array, span: Span): StartTag | undefined {
  return parseStartTag(decoder.decode(xml.subarray(span.start, span.end)));
}

function plainMessage(message: string, namespace: string): string {
  return message.replaceAll(`{${namespace}}`, '');
}

interface Run {
  xml: Uint8Array;
  engine: Libxml2Engine;
  schema: number;
  namespace: string;
  idAttribute: string;
  sliced: boolean;
  hasHeader: boolean;
  maxProblems: number;
  problems: Located[];
  capped: boolean;
  /** xs:ID value -> index of the first slice that holds it. */
  ids: Map<string, number>;
}

function parseSlice(run: Run, slice: Slice): number {
  const outcome = run.engine.parse(slice.segments.map((segment) => segment.bytes));
  if (outcome.ok) return outcome.doc;
  const [first] = outcome.errors;
  const bytes = joined(slice);
  const starts = lineStarts(bytes);
  const offset = first ? offsetOf(bytes, { line: Math.max(1, first.line), column: Math.max(1, first.column) }, starts) : 0;
  // Some messages name the line of an open tag ("... tag x line 5"); that line is in the slice, not the document.
  const message = (first?.message ?? 'Document is not well-formed').replace(/\bline (\d+)/g, (_text, line: string) => {
    const [position] = positionsOf(run.xml, [originalOffset(slice, offsetOf(bytes, { line: Number(line), column: 1 }, starts))]);
    return `line ${position?.line ?? line}`;
  });
  throw invalid(run.xml, originalOffset(slice, offset), message);
}

function idsSeenEarlier(run: Run, slice: Slice, doc: number, reported: ReadonlySet<number>): Diagnostic[] {
  const attribute = `@${run.idAttribute}`;
  // Later slices repeat the root tag and the header; their IDs belong to the first slice.
  // (XPaths with several context nodes, like /*/*/descendant::*, are quadratic in libxml2.)
  const repeated = new Set<number>();
  if (slice.index > 0) {
    repeated.add(run.engine.rootElement(doc));
    if (run.hasHeader) for (const { element } of run.engine.attributeValues(doc, `/*/*[1]/descendant-or-self::*/${attribute}`)) repeated.add(element);
  }
  const duplicates: Diagnostic[] = [];
  for (const { value, element } of run.engine.attributeValues(doc, `//${attribute}`)) {
    if (repeated.has(element)) continue;
    const id = value.trim();
    const first = run.ids.get(id);
    if (first === undefined) run.ids.set(id, slice.index);
    else if (first !== slice.index && !reported.has(element)) {
      const message = `Element '${run.engine.elementName(element)}', attribute '${run.idAttribute}': the ID '${id}' is already used earlier in the document.`;
      duplicates.push({ message, line: 0, column: 0, element });
    }
  }
  return duplicates;
}

function validateSlice(run: Run, slice: Slice, doc: number): void {
  const remaining = run.maxProblems - run.problems.length;
  const { errors, total } = run.engine.validate(doc, run.schema, remaining);
  if (total > errors.length) run.capped = true;
  const reported = new Set(errors.map((error) => error.element));
  const diagnostics = run.sliced ? [...errors, ...idsSeenEarlier(run, slice, doc, reported)] : errors;
  if (diagnostics.length === 0) return;

  const bytes = joined(slice);
  const ordinals = run.engine.elementOrdinals(doc, new Set(diagnostics.map((d) => d.element).filter((element) => element !== 0)));
  const tagOffsets = startTagOffsets(bytes, new Set(ordinals.values()));
  let starts: number[] | undefined;
  for (const diagnostic of diagnostics) {
    const ordinal = ordinals.get(diagnostic.element);
    const offset =
      (ordinal === undefined ? undefined : tagOffsets.get(ordinal)) ??
      offsetOf(bytes, { line: Math.max(1, diagnostic.line), column: 1 }, (starts ??= lineStarts(bytes)));
    // The header is repeated in every slice; its errors are reported by the first.
    if (slice.index > 0 && segmentAt(slice, offset)?.kind === 'header') continue;
    run.problems.push({ offset: originalOffset(slice, offset), message: plainMessage(diagnostic.message, run.namespace) });
  }
  if (run.problems.length >= run.maxProblems) run.capped = true;
}

function schemaViolation(run: Run): SchemaViolationError {
  const seen = new Set<string>();
  const unique = run.problems
    .toSorted((a, b) => a.offset - b.offset)
    .filter(({ offset, message }) => !seen.has(`${offset}\u0000${message}`) && seen.add(`${offset}\u0000${message}`));
  const positions = positionsOf(run.xml, unique.map((problem) => problem.offset));
  const problems: XmlProblem[] = unique.map(({ message }, i) => ({ line: positions[i]?.line ?? 1, column: positions[i]?.column ?? 1, message }));
  const last = problems.at(-1);
  if (run.capped && last) {
    problems.push({ line: last.line, column: last.column, message: `More than ${run.maxProblems} schema errors; the rest are not listed.` });
  }
  return new SchemaViolationError(problems);
}

type Expectation = { kind: 'batch' } | { kind: 'document'; version: SchemaVersion };

/** The root start tag; a document without one is handed to libxml2 for its diagnosis. */
function rootOf(engine: Libxml2Engine, xml: Uint8Array, shape: Outline): { span: Span; tag: StartTag } {
  const tag = shape.root && startTagAt(xml, shape.root);
  if (shape.root !== undefined && tag !== undefined) return { span: shape.root, tag };
  const parsed = engine.parse([xml]);
  if (parsed.ok) engine.freeDoc(parsed.doc);
  const error = parsed.ok ? undefined : parsed.errors[0];
  throw new InvalidXmlError([{ line: error?.line || 1, column: error?.column || 1, message: error?.message ?? 'The document has no root element' }]);
}

function batchVersion(xml: Uint8Array, root: { span: Span; tag: StartTag }): SchemaVersion {
  const version = versionOfNamespace(root.tag.namespace);
  if (version === undefined || root.tag.localName !== VERSIONS[version].batchRoot) {
    const found = `${root.tag.localName} (${root.tag.namespace ?? 'no namespace'})`;
    throw invalid(xml, root.span.start, `The root element must be batchUpdate (${VERSIONS.v2.namespace}) or bu (${VERSIONS.v1.namespace}), not ${found}`);
  }
  return version;
}

interface Plan {
  slices: Slice[];
  hasHeader: boolean;
  /** False when the header is missing: then every later slice would fail on its first element, where a whole-document check stops. */
  validatesAllSlices: boolean;
}

function planFor(xml: Uint8Array, shape: Outline, root: { span: Span; tag: StartTag }, info: VersionInfo, maxElementBytes: number): Plan {
  const headerName = root.tag.namespace === info.namespace ? info.sliceableRoots.get(root.tag.localName) : undefined;
  if (headerName === undefined) {
    return { slices: planSlices(xml, root.span, undefined, [], root.tag.qname), hasHeader: false, validatesAllSlices: true };
  }
  const largest = shape.largestChild;
  if (largest !== undefined && largest.end - largest.start > maxElementBytes) {
    const size = `${((largest.end - largest.start) / MIB).toFixed(1)} MiB`;
    throw invalid(xml, largest.start, `A top-level element of ${size} is larger than the ${(maxElementBytes / MIB).toFixed(1)} MiB accepted`);
  }
  const first = shape.firstChild;
  const firstTag = first && startTagAt(xml, { start: first.start, end: Math.min(first.end, first.start + 512) });
  const hasHeader = headerName !== null && firstTag?.localName === headerName;
  return {
    slices: planSlices(xml, root.span, hasHeader ? first : undefined, shape.cuts, root.tag.qname),
    hasHeader,
    validatesAllSlices: headerName === null || hasHeader,
  };
}

interface Validated {
  version: SchemaVersion;
  shape: Outline;
  hasHeader: boolean;
}

async function validateXml(xml: Uint8Array, expectation: Expectation, options: ValidateOptions): Promise<Validated> {
  const { maxDepth, maxProblems, sliceBytes, maxElementBytes } = {
    maxDepth: options.maxDepth ?? DEFAULTS.maxDepth,
    maxProblems: options.maxProblems ?? DEFAULTS.maxProblems,
    sliceBytes: options.sliceBytes ?? DEFAULTS.sliceBytes,
    maxElementBytes: options.maxElementBytes ?? DEFAULTS.maxElementBytes,
  };
  refuseOtherEncodings(xml);
  const shape = outline(xml, maxDepth, sliceBytes);
  if (shape.refusal) throw invalid(xml, shape.refusal.offset, shape.refusal.message);

  const from = acquireEngine();
  const loaded = await from;
  try {
    const { engine } = loaded;
    const root = rootOf(engine, xml, shape);
    const version = expectation.kind === 'batch' ? batchVersion(xml, root) : expectation.version;
    const info = VERSIONS[version];
    const { slices, hasHeader, validatesAllSlices } = planFor(xml, shape, root, info, maxElementBytes);
    const run: Run = {
      xml,
      engine,
      schema: loaded.schemas.get(version) as number,
      namespace: info.namespace,
      idAttribute: info.idAttribute,
      sliced: slices.length > 1,
      hasHeader,
      maxProblems,
      problems: [],
      capped: false,
      ids: new Map(),
    };
    for (const slice of slices) {
      const doc = parseSlice(run, slice);
      try {
        if (!run.capped && (slice.index === 0 || validatesAllSlices)) validateSlice(run, slice, doc);
      } finally {
        engine.freeDoc(doc);
      }
      if (slices.length > 1) await yieldToEventLoop();
    }
    if (run.problems.length > 0) throw schemaViolation(run);
    return { version, shape, hasHeader };
  } finally {
    releaseEngine(loaded, from);
  }
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

export async function validateBatchXml(xml: Uint8Array, options: ValidateOptions = {}): Promise<ValidatedBatch> {
  const { version, shape, hasHeader } = await validateXml(xml, { kind: 'batch' }, options);
  const changes = shape.childCount - (hasHeader ? 1 : 0);
  const header = hasHeader && shape.firstChild ? headerStartTag(xml, shape.firstChild) : undefined;
  const batchUuid = header === undefined ? undefined : attributeOf(header, VERSIONS[version].batchIdAttribute);
  return batchUuid === undefined ? { version, changes } : { version, changes, batchUuid };
}

function headerStartTag(xml: Uint8Array, header: Span): string {
  const head = decoder.decode(xml.subarray(header.start, Math.min(header.end, header.start + 4096)));
  const end = head.indexOf('>');
  return end < 0 ? head : head.slice(0, end + 1);
}

/** An unprefixed attribute of a start tag; the schema has already checked its form. */
function attributeOf(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  return match ? (match[1] ?? match[2]) : undefined;
}

/** Validates a document with any root element of the given version's schema (exports, results, records). */
export async function validateDocument(xml: Uint8Array, version: SchemaVersion, options: ValidateOptions = {}): Promise<void> {
  await validateXml(xml, { kind: 'document', version }, options);
}
