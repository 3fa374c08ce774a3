// The result document's JSON is sent in pieces small enough for V8's young
// generation (a large-object piece is freed only by a full collection).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LINES_PER_PIECE, RevisionLines } from '../../domain/batch/revision-lines.ts';
import type { PlannedRecord } from '../../domain/batch/index.ts';

function planned(localId: string, entityId: number, rev: string, metadataRev: string): PlannedRecord {
  const entityUuid = randomUUID();
  return { localId, isNew: true, after: { entityId, entityUuid, revision: { rev, metadataRev } }, changes: {}, contentChanged: true } as unknown as PlannedRecord;
}

describe('RevisionLines.jsonPieces', () => {
  it('writes its JSON in pieces of LINES_PER_PIECE lines by default, each far below V8\'s large-object size', () => {
    const lines = new RevisionLines();
    // localIds as long as a batch's usually are, and longer.
    for (let index = 0; index < 3 * LINES_PER_PIECE + 7; index += 1) lines.add(planned(`localId-of-a-batch-${index}`.padEnd(40, 'x'), index + 1_000_000, randomUUID(), randomUUID()));
    const pieces = [...lines.jsonPieces()];
    // Three full pieces, the rest with the closing bracket.
    expect(pieces).toHaveLength(4);
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThan(64 * 1024);
    expect(JSON.parse(pieces.join(''))).toEqual(lines.toRevisions());
  });

});
