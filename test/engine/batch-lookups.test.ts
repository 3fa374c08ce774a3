import { describe, expect, it } from 'vitest';
import { batchLookups, createBatchWorld } from '../support/batch-planning.ts';
import type { ChangeCommand } from '../../domain/model.ts';
import { create, namePart, storedRecord, summary } from '../domain/batch-fixtures.ts';

describe('batchLookups', () => {
  it('lists what the caller must load before planning', () => {
    const commands: ChangeCommand[] = [
      create(
        'a',
        [
          namePart('p', 'A'),
          { partUuid: '', type: 'PT_REL', items: [{ kind: 'entityRef', type: 'R', target: { kind: 'stored', ref: { entityId: 7 } } }] },
        ],
        {
          entityUuid: 'cccccccc-0000-4000-8000-000000000001',
        },
      ),
      create('b', [namePart('q', 'B')]),
      {
        kind: 'update',
        entity: { kind: 'stored', localId: 's', entityId: 1, rev: 'r' },
        changes: [
          {
            op: 'newItems',
            part: { type: 'PT_REL' },
            items: [{ kind: 'entityRef', type: 'R', target: { kind: 'stored', ref: { entityUuid: 'u-8' } } }],
          },
          { op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'stored', ref: { entityId: 7 } } },
          { op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'local', localId: 'a' } },
        ],
      },
      { kind: 'update', entity: { kind: 'stored', localId: 't', entityId: 1, rev: 'r' }, changes: [] },
    ];
    expect(batchLookups(commands)).toEqual({
      records: [{ entityId: 1 }],
      targets: [{ entityId: 7 }, { entityUuid: 'u-8' }],
      createUuids: ['cccccccc-0000-4000-8000-000000000001'],
      createCount: 2,
    });
  });
});

describe('createBatchWorld', () => {
  it('finds loaded records and entities by id or uuid and knows taken uuids', () => {
    const record = storedRecord();
    const loaded = createBatchWorld({ records: [record], entities: [summary(7)], takenUuids: ['t-1'] });
    expect(loaded.findRecord({ entityId: 1 })).toBe(record);
    expect(loaded.findRecord({ entityUuid: record.entityUuid })).toBe(record);
    expect(loaded.findRecord({ entityId: 7 })).toBeUndefined();
    expect(loaded.findEntity({ entityUuid: summary(7).entityUuid })).toEqual(summary(7));
    expect(loaded.uuidExists('t-1')).toBe(true);
    expect(loaded.uuidExists(record.entityUuid)).toBe(true);
    expect(loaded.uuidExists('free')).toBe(false);
  });
});
