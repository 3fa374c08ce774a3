// The compact revision lines of a grouped apply give back exactly the lines added.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RevisionLines } from '../../domain/batch/revision-lines.ts';
import type { PlannedRecord } from '../../domain/batch/index.ts';

function planned(localId: string, entityId: number, rev: string, metadataRev: string): PlannedRecord {
  const entityUuid = randomUUID();
  return { localId, isNew: true, after: { entityId, entityUuid, revision: { rev, metadataRev } }, changes: {}, contentChanged: true } as unknown as PlannedRecord;
}

describe('RevisionLines', () => {
  it('gives back every line in order, with its revision ids as added, past its first growth', () => {
    const lines = new RevisionLines();
    const records = Array.from({ length: 2500 }, (_, index) => planned(`e${index}`, index + 1, randomUUID(), randomUUID()));
    for (const record of records) lines.add(record);
    expect(lines.length).toBe(2500);
    expect(lines.toRevisions()).toEqual(
      records.map((record) => ({
        localId: record.localId,
        entityId: record.after.entityId,
        entityUuid: record.after.entityUuid,
        rev: record.after.revision.rev,
        metadataRev: record.after.revision.metadataRev,
      })),
    );
  });

  it('keeps revision ids that are not lower-case canonical UUIDs as given', () => {
    const lines = new RevisionLines();
    const upper = randomUUID().toUpperCase();
    lines.add(planned('a', 1, upper, 'not-a-uuid'));
    lines.add(planned('b', 2, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'));
    const [first, second] = lines.toRevisions();
    expect([first!.rev, first!.metadataRev]).toEqual([upper, 'not-a-uuid']);
    expect([second!.rev, second!.metadataRev]).toEqual(['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']);
  });

  it('writes as JSON pieces exactly what JSON.stringify of its lines gives, whatever the pieces\' size and the localIds hold', () => {
    const lines = new RevisionLines();
    const odd = ['quote"', 'back\\slash', 'tab\tand\nline', 'Žluťoučký kůň', '😀 astral', '</x>&'];
    for (let index = 0; index < 2345; index += 1) lines.add(planned(odd[index % odd.length]! + index, index + 1, randomUUID(), index === 7 ? 'not-a-uuid' : randomUUID()));
    const expected = JSON.stringify(lines.toRevisions());
    for (const perPiece of [1, 7, 1000, 5000]) expect([...lines.jsonPieces(perPiece)].join('')).toBe(expected);
    expect([...new RevisionLines().jsonPieces()].join('')).toBe('[]');
  });
});

