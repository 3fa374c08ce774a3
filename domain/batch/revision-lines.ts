import type { BatchRevisionResult } from '../model.ts';
import { CANONICAL_UUID, NumberColumn, readUuid, UUID_BYTES, UuidColumn, writeUuid } from './columns.ts';
import type { PlannedRecord } from './types.ts';

/**
 * The success document's revision lines of a batch applied group by group,
 * kept until its end. Compact, because a batch of 300,000 entities keeps one
 * for each (docs/performance.md, worker memory): the two revision UUIDs as
 * 16 bytes each outside V8's heap instead of two strings and an object per
 * line, the entityUuid too; the localId string is the one the survey holds.
 */
/**
 * Lines of the result's JSON text per piece: about 190 bytes a line, so a
 * piece stays well under V8's large-object size (128 KB). A piece of 1,000
 * lines was a large object, which only a full collection frees: at the end of
 * a 320,000 apply some 60 MB of them at once (docs/performance.md).
 */
export const LINES_PER_PIECE = 250;

export class RevisionLines {
  readonly #localIds: string[] = [];
  readonly #entityIds = new NumberColumn();
  readonly #entityUuids = new UuidColumn();
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
  *jsonPieces(linesPerPiece = LINES_PER_PIECE): Generator<string> {
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
      entityId: this.#entityIds.get(index),
      entityUuid: this.#entityUuids.get(index)!,
      rev: verbatim?.rev ?? readUuid(this.#revs, offset),
      metadataRev: verbatim?.metadataRev ?? readUuid(this.#revs, offset + UUID_BYTES),
    };
  }
}
