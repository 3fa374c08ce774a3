import type { BatchRevisionResult } from '../model.ts';
import type { PlannedRecord } from './types.ts';

const UUID_BYTES = 16;
/** A UUID as the service writes it: lower-case hex in the canonical 8-4-4-4-12 groups. */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The success document's revision lines of a batch applied group by group,
 * kept until its end. Compact, because a batch of 300,000 entities keeps one
 * for each (docs/performance.md, worker memory): the two revision UUIDs as
 * 16 bytes each outside V8's heap instead of two strings and an object per
 * line; the localId and entityUuid strings are the ones the survey and the
 * planner already hold.
 */
export class RevisionLines {
  readonly #localIds: string[] = [];
  readonly #entityIds: number[] = [];
  readonly #entityUuids: string[] = [];
  #revs = new Uint8Array(1024 * 2 * UUID_BYTES);
  /** Lines whose revision ids are not canonical UUIDs (never written by this service, kept as given). */
  readonly #verbatim = new Map<number, { rev: string; metadataRev: string }>();

  get length(): number {
    return this.#localIds.length;
  }

  add(record: PlannedRecord): void {
    const index = this.#localIds.length;
    const { rev, metadataRev } = record.after.revision;
    this.#localIds.push(record.localId);
    this.#entityIds.push(record.after.entityId);
    this.#entityUuids.push(record.after.entityUuid);
    const offset = index * 2 * UUID_BYTES;
    if (offset + 2 * UUID_BYTES > this.#revs.length) {
      const grown = new Uint8Array(this.#revs.length * 2);
      grown.set(this.#revs);
      this.#revs = grown;
    }
    if (!CANONICAL_UUID.test(rev) || !CANONICAL_UUID.test(metadataRev)) {
      this.#verbatim.set(index, { rev, metadataRev });
      return;
    }
    writeUuid(rev, this.#revs, offset);
    writeUuid(metadataRev, this.#revs, offset + UUID_BYTES);
  }

  /**
   * The lines as JSON text, the array `toRevisions()` would stringify to,
   * in pieces of `linesPerPiece` lines: a batch of 300,000 entities has
   * 60 MB of it, which is then never one string, nor an object per line.
   */
  *jsonPieces(linesPerPiece = 1000): Generator<string> {
    let piece = '[';
    for (let index = 0; index < this.#localIds.length; index += 1) {
      piece += (index === 0 ? '' : ',') + JSON.stringify(this.#line(index));
      if ((index + 1) % linesPerPiece === 0) {
        yield piece;
        piece = '';
      }
    }
    yield `${piece}]`;
  }

  /** The lines as the success document lists them, in the order they were added. */
  toRevisions(): BatchRevisionResult[] {
    return Array.from({ length: this.#localIds.length }, (_, index) => this.#line(index));
  }

  #line(index: number): BatchRevisionResult {
    const offset = index * 2 * UUID_BYTES;
    const verbatim = this.#verbatim.get(index);
    return {
      localId: this.#localIds[index]!,
      entityId: this.#entityIds[index]!,
      entityUuid: this.#entityUuids[index]!,
      rev: verbatim?.rev ?? readUuid(this.#revs, offset),
      metadataRev: verbatim?.metadataRev ?? readUuid(this.#revs, offset + UUID_BYTES),
    };
  }
}

function writeUuid(uuid: string, target: Uint8Array, offset: number): void {
  let at = offset;
  for (let index = 0; index < uuid.length; index += 2) {
    if (uuid.charCodeAt(index) === DASH) index += 1;
    target[at++] = (hexValue(uuid.charCodeAt(index)) << 4) | hexValue(uuid.charCodeAt(index + 1));
  }
}

function hexValue(code: number): number {
  return code <= 57 ? code - 48 : code - 87;
}

const HEX_DIGITS = '0123456789abcdef';
const DASH = 45;

/** The canonical text, built flat (concatenated, V8 would keep it as a rope of 20 pieces). */
function readUuid(source: Uint8Array, offset: number): string {
  const codes: number[] = [];
  for (let index = 0; index < UUID_BYTES; index += 1) {
    if (index === 4 || index === 6 || index === 8 || index === 10) codes.push(DASH);
    const byte = source[offset + index]!;
    codes.push(HEX_DIGITS.charCodeAt(byte >> 4), HEX_DIGITS.charCodeAt(byte & 15));
  }
  return String.fromCharCode(...codes);
}
