// The apply's first pass over a stored batch, on the raw bytes: what the
// survey needs of each command, without sax and without building the command.
// A stored body was validated against its schema when it was uploaded, so
// a byte-level walk of its tags (engine/validation/scan.ts) finds the same
// elements a full reading does. Only the common shape is read this way: a
// create whose localId, entityUuid and stored entity references are plain
// attribute values (no character references, no whitespace to normalise).
// Every other command (updates, and creates the walk is not sure of) goes,
// in document order, through one full reader fed with its bytes alone; and
// whatever the walk does not expect (or the full reader refuses) gives the
// whole first pass back to the full reading (undefined), so that a body that
// does not read fails as it always has. What the walk does not check (a
// create's parts, items and values) the second pass reads in full, and a
// document refused there is refused with the same error, before any commit.

import type { BatchHeader, ChangeCommand, EntityRef } from '../../domain/model.ts';
import { walkTagsFrom, type TagVisitor } from '../validation/scan.ts';
import { batchPushReader } from '../../domain/xml/batch-reader.ts';
import { findForbiddenCharacter } from '../../domain/xml/escape.ts';
import { versionOfNamespace, vocabularyFor, type Vocabulary } from '../../domain/xml/vocabulary.ts';

/** What the first pass hands over per command (BatchSurvey takes both). */
export interface SurveySink {
  /** A create: its localId, its own entityUuid when it brings one, and the stored entities its items point at, in document order. */
  addCreate(localId: string, entityUuid: string | undefined, targets: readonly EntityRef[]): void;
  /** Any other command, read in full. */
  add(command: ChangeCommand): void;
}

export interface SurveyScanSummary {
  header: BatchHeader;
  changes: number;
}

/**
 * Walks a stored batch body and hands each command to `sink` in document
 * order; `onChunk` is awaited after each chunk of the body (progress, abort).
 * Undefined when the walk met what it does not read (a DOCTYPE, a body that
 * is not well formed, a command the full reader refuses): then the sink has
 * seen part of the batch only, and the caller reads it in full instead.
 */
export async function scanBatchSurvey(
  source: AsyncIterable<Uint8Array | string>,
  sink: SurveySink,
  onChunk: () => Promise<void>,
): Promise<SurveyScanSummary | undefined> {
  const walker = new SurveyWalker(sink);
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    pending = pending.length === 0 ? bytes : Buffer.concat([pending, bytes]);
    const keep = walker.walk(pending, false);
    if (keep < 0) return undefined;
    pending = pending.subarray(keep);
    await onChunk();
  }
  if (walker.walk(pending, true) < 0) return undefined;
  return walker.summary();
}

const ATTRIBUTE = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
/** Attribute values the walk takes as written: no character references, nothing XML would normalise or refuse. */
const PLAIN_VALUE = /^[^&\t\n\r<]*$/;
const INTEGER = /^[+-]?\d+$/;

/** A start tag's qualified name and its attributes by qualified name. */
function parseStartTag(bytes: Buffer, lt: number, gt: number): { qname: string; attributes: Map<string, string> } {
  const tag = bytes.toString('utf8', lt + 1, gt);
  const nameEnd = tag.search(/[\s/>]|$/);
  const qname = tag.slice(0, nameEnd);
  const attributes = new Map<string, string>();
  ATTRIBUTE.lastIndex = nameEnd;
  for (let match = ATTRIBUTE.exec(tag); match !== null; match = ATTRIBUTE.exec(tag)) attributes.set(match[1]!, flat(match[2] ?? match[3]!));
  return { qname, attributes };
}

/**
 * A copy of a value cut out of a tag's text: V8 keeps a substring of 13
 * characters or more as a slice holding the whole tag, and the survey keeps
 * localIds and entity UUIDs to the end of the apply.
 */
function flat(value: string): string {
  return value.length < 13 ? value : Buffer.from(value, 'utf8').toString('utf8');
}

function localName(qname: string): string {
  const colon = qname.indexOf(':');
  return colon < 0 ? qname : qname.slice(colon + 1);
}

/** An attribute as the full reader would give it, or 'unsure' when only the full reader can say. */
function plainAttribute(attributes: ReadonlyMap<string, string>, name: string): string | undefined | 'unsure' {
  const value = attributes.get(name);
  if (value === undefined) return undefined;
  return PLAIN_VALUE.test(value) && findForbiddenCharacter(value) < 0 ? value : 'unsure';
}

class SurveyWalker implements TagVisitor {
  readonly #sink: SurveySink;
  /** Per open element, the root first: whether it is an item's entity reference (the only name the walk asks about below a command). */
  readonly #open: boolean[] = [];
  /** The local names the walk compares nested tags with, as bytes: no string is made per tag. */
  #entityRefName: Buffer = Buffer.alloc(0);
  #storedTargetName: Buffer = Buffer.alloc(0);
  #bytes: Buffer = Buffer.alloc(0);
  /** Where the next walk resumes, in #bytes. */
  #resume = 0;
  #vocab: Vocabulary | undefined;
  #rootStart: Buffer | undefined;
  #rootClosed = false;
  /** The full reader, for the header and the commands the walk does not read itself. */
  #reader: ReturnType<typeof batchPushReader> | undefined;
  #collected: ChangeCommand[] = [];
  #header: BatchHeader | undefined;
  #changes = 0;
  /** The open top-level element: where it starts in #bytes, and what the walk has read of it. */
  #command: { start: number; create: { localId: string; entityUuid: string | undefined; targets: EntityRef[] } | undefined } | undefined;
  #failed = false;

  constructor(sink: SurveySink) {
    this.#sink = sink;
  }

  /** Walks `bytes` (what was kept last time, then the new bytes); returns how many leading bytes are done with, or -1 to give up. */
  walk(bytes: Buffer, final: boolean): number {
    this.#bytes = bytes;
    const resume = walkTagsFrom(bytes, this.#resume, this, final);
    if (resume < 0 || this.#failed) return -1;
    if (final && (!this.#rootClosed || this.#header === undefined || this.#command !== undefined)) return -1;
    const keep = this.#command === undefined ? resume : Math.min(resume, this.#command.start);
    if (this.#command !== undefined) this.#command.start -= keep;
    this.#resume = resume - keep;
    return keep;
  }

  summary(): SurveyScanSummary {
    return { header: this.#header!, changes: this.#changes };
  }

  startTag(lt: number, gt: number, selfClosing: boolean): boolean {
    const depth = this.#open.length;
    if (depth === 0) return this.#root(lt, gt, selfClosing);
    const vocab = this.#vocab!;
    if (depth === 1) {
      const { qname, attributes } = parseStartTag(this.#bytes, lt, gt);
      this.#command = { start: lt, create: undefined };
      if (this.#header !== undefined && localName(qname) === vocab.batch.create) {
        const localId = plainAttribute(attributes, vocab.batch.localId);
        const entityUuid = plainAttribute(attributes, vocab.batch.entityUuid);
        if (localId !== undefined && localId !== 'unsure' && entityUuid !== 'unsure')
          this.#command.create = { localId, entityUuid, targets: [] };
      }
      if (selfClosing) return this.#endCommand(gt + 1);
      this.#open.push(false);
      return true;
    }
    // Inside a command the walk only needs to know which open elements are entity references, and a create's stored entity references.
    const [nameStart, nameEnd] = this.#localNameAt(lt, gt);
    const create = this.#command?.create;
    if (create !== undefined && this.#open[depth - 1] === true && this.#nameIs(nameStart, nameEnd, this.#storedTargetName)) {
      const target = storedRef(parseStartTag(this.#bytes, lt, gt).attributes, vocab);
      if (target === undefined) this.#command!.create = undefined;
      else create.targets.push(target);
    }
    if (!selfClosing) this.#open.push(this.#nameIs(nameStart, nameEnd, this.#entityRefName));
    return true;
  }

  endTag(_lt: number, gt: number): boolean {
    this.#open.pop();
    if (this.#open.length === 0) this.#rootClosed = true;
    // The top-level element the walk was in ends here.
    return this.#open.length === 1 && this.#command !== undefined ? this.#endCommand(gt + 1) : true;
  }

  declaration(): boolean {
    this.#failed = true;
    return false;
  }

  #root(lt: number, gt: number, selfClosing: boolean): boolean {
    if (this.#rootClosed || selfClosing) return this.#fail();
    const { qname, attributes } = parseStartTag(this.#bytes, lt, gt);
    const colon = qname.indexOf(':');
    const namespace = attributes.get(colon < 0 ? 'xmlns' : `xmlns:${qname.slice(0, colon)}`);
    const version = versionOfNamespace(namespace);
    if (version === undefined) return this.#fail();
    this.#vocab = vocabularyFor(version);
    this.#entityRefName = Buffer.from(this.#vocab.item.entityRef, 'latin1');
    this.#storedTargetName = Buffer.from(this.#vocab.item.storedTarget, 'latin1');
    this.#rootStart = Buffer.from(this.#bytes.subarray(lt, gt + 1));
    this.#open.push(false);
    return true;
  }

  /** Where the local name of the tag at `lt` starts and ends (after its prefix's colon, before whitespace, '/' or '>'). */
  #localNameAt(lt: number, gt: number): [number, number] {
    const bytes = this.#bytes;
    let start = lt + 1;
    let end = start;
    while (end < gt) {
      const byte = bytes[end]!;
      if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0x2f) break;
      if (byte === 0x3a) start = end + 1;
      end += 1;
    }
    return [start, end];
  }

  #nameIs(start: number, end: number, name: Buffer): boolean {
    return end - start === name.length && this.#bytes.compare(name, 0, name.length, start, end) === 0;
  }

  #endCommand(end: number): boolean {
    const command = this.#command!;
    this.#command = undefined;
    if (this.#header === undefined) {
      // The first child: the header, read by the full reader (which also checks the root, and that this is the header).
      const read = this.#read(Buffer.concat([this.#rootStart!, this.#bytes.subarray(command.start, end)]));
      if (this.#failed || read.length > 0) return this.#fail();
      this.#header = this.#reader!.header();
      return true;
    }
    this.#changes += 1;
    if (command.create !== undefined) {
      this.#sink.addCreate(command.create.localId, command.create.entityUuid, command.create.targets);
      return true;
    }
    // One reader reads these in order: what a command refers to in an earlier one (a userRef) is there, as in a full reading.
    const read = this.#read(this.#bytes.subarray(command.start, end));
    if (this.#failed || read.length !== 1) return this.#fail();
    this.#sink.add(read[0]!);
    return true;
  }

  /** The commands the full reader finds in these bytes (whole elements, fed after the root's start tag and the header); a refusal fails the walk. */
  #read(bytes: Buffer): ChangeCommand[] {
    const commands: ChangeCommand[] = [];
    this.#collected = commands;
    this.#reader ??= batchPushReader((command) => this.#collected.push(command));
    try {
      this.#reader.write(bytes.toString('utf8'));
    } catch {
      this.#failed = true;
    }
    return commands;
  }

  #fail(): boolean {
    this.#failed = true;
    return false;
  }
}

/** A stored entity reference (EntityRecordRef) as readEntityRef gives it, or undefined when only the full reader can say. */
function storedRef(attributes: ReadonlyMap<string, string>, vocab: Vocabulary): EntityRef | undefined {
  const id = plainAttribute(attributes, vocab.id.entityId);
  const entityUuid = plainAttribute(attributes, vocab.id.entityUuid);
  if (id === 'unsure' || entityUuid === 'unsure' || (id === undefined && entityUuid === undefined)) return undefined;
  const ref: EntityRef = {};
  if (id !== undefined) {
    const trimmed = id.trim();
    const entityId = Number(trimmed);
    if (!INTEGER.test(trimmed) || !Number.isSafeInteger(entityId)) return undefined;
    ref.entityId = entityId;
  }
  if (entityUuid !== undefined) ref.entityUuid = entityUuid;
  return ref;
}
