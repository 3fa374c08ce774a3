// Which entity a reference names (domain/batch/references.ts), through the planner.

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import type { Part } from '../../domain/model.ts';
import { codes, create, namePart, relTo, storedRecord, summary, testEnv, world } from './batch-fixtures.ts';

describe('planBatch: local references', () => {
  it('resolves references between creates, also forward ones, to the created ids', () => {
    const plan = planBatch(
      [create('a', [namePart('pa', 'A'), relTo('b')]), create('b', [namePart('pb', 'B'), relTo('a')])],
      world(),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    const [a, b] = plan.records;
    const targetOf = (record: typeof a) => record?.after.parts[1]?.items[0];
    expect(targetOf(a)).toMatchObject({
      target: { kind: 'stored', ref: { entityId: b?.after.entityId, entityUuid: b?.after.entityUuid } },
    });
    expect(targetOf(b)).toMatchObject({
      target: { kind: 'stored', ref: { entityId: a?.after.entityId, entityUuid: a?.after.entityUuid } },
    });
    expect(a?.changes.created?.parts[1]?.items[0]).toEqual(targetOf(a));
  });

  it('resolves a local reference to a stored entity declared by an update', () => {
    const stored = storedRecord();
    const plan = planBatch(
      [
        create('a', [namePart('pa', 'A'), relTo('s')]),
        {
          kind: 'update',
          entity: { kind: 'stored', localId: 's', entityId: 1, rev: 'rev-1' },
          changes: [{ op: 'setEntityType', entityType: 'PERSON' }],
        },
      ],
      world({ records: [stored] }),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    expect(plan.records[0]?.after.parts[1]?.items[0]).toMatchObject({ target: { ref: { entityId: 1, entityUuid: stored.entityUuid } } });
  });

  it('rejects a stored reference whose id and uuid name different entities', () => {
    const part: Part = {
      partUuid: '',
      type: 'PT_REL',
      items: [
        { kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'stored', ref: { entityId: 7, entityUuid: summary(8).entityUuid } } },
      ],
    };
    const plan = planBatch([create('a', [namePart('pa', 'A'), part])], world({ entities: [summary(7), summary(8)] }), testEnv());
    expect(codes(plan)).toEqual(['UnknownEntity']);
  });

  it('finds a create of the batch by the UUID the client gave it', () => {
    const uuid = 'cccccccc-0000-4000-8000-000000000009';
    const part: Part = {
      partUuid: '',
      type: 'PT_REL',
      items: [{ kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'stored', ref: { entityUuid: uuid } } }],
    };
    const plan = planBatch(
      [create('a', [namePart('pa', 'A'), part]), create('b', [namePart('pb', 'B')], { entityUuid: uuid })],
      world(),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    expect(plan.records[0]?.after.parts[1]?.items[0]).toMatchObject({ target: { ref: { entityId: 1001, entityUuid: uuid } } });
  });
});
