// The warning about references to inactive entities
// (domain/batch/inactive-reference-rules.ts), through the planner.

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import type { EntityState, Part } from '../../domain/model.ts';
import {
  allIssues,
  codes,
  create,
  expectOnlyWarning,
  namePart,
  replacedBy,
  storedRecord,
  summary,
  testEnv,
  updateLocal,
  updateStored,
  world,
} from './batch-fixtures.ts';

describe('planBatch: references to inactive entities', () => {
  const relTo = (target: { entityId: number } | { localId: string }): Part => ({
    partUuid: '',
    type: 'PT_REL',
    items: [
      {
        kind: 'entityRef',
        type: 'REL_ENTITY',
        target: 'localId' in target ? { kind: 'local', localId: target.localId } : { kind: 'stored', ref: target },
      },
    ],
  });

  it.each<EntityState>(['ERS_INVALID', 'ERS_REPLACED'])('warns about an item pointing at an entity in %s', (state) => {
    const plan = planBatch(
      [create('n', [namePart('p', 'A'), relTo({ entityId: 7 })])],
      world({ entities: [summary(7, state)] }),
      testEnv(),
    );
    expectOnlyWarning(plan, {
      localId: 'n',
      issueCode: 'ReferenceToInactiveEntity',
      entityRef: { entityId: 7, entityUuid: summary(7).entityUuid },
      itemRef: expect.objectContaining({ type: 'REL_ENTITY' }),
    });
  });

  it('does not warn about active targets', () => {
    const plan = planBatch(
      [create('n', [namePart('p', 'A'), relTo({ entityId: 7 })])],
      world({ entities: [summary(7, 'ERS_NEW')] }),
      testEnv(),
    );
    expect(allIssues(plan)).toEqual([]);
  });

  it('warns about a replacement that is itself inactive', () => {
    const record = storedRecord();
    const plan = planBatch(
      [updateStored('s', record, [replacedBy(7)])],
      world({ records: [record], entities: [summary(7, 'ERS_REPLACED')] }),
      testEnv(),
    );
    expect(allIssues(plan)).toEqual([
      expect.objectContaining({
        severity: 'WARNING',
        issueCode: 'ReferenceToInactiveEntity',
        entityRef: { entityId: 7, entityUuid: summary(7).entityUuid },
      }),
    ]);
  });

  it('judges by the state at the end of the batch, naming batch creates by localId', () => {
    const plan = planBatch(
      [
        create('a', [namePart('pa', 'A'), relTo({ localId: 'b' })]),
        create('b', [namePart('pb', 'B')]),
        updateLocal('b', [{ op: 'setState', state: 'ERS_INVALID' }]),
      ],
      world(),
      testEnv(),
    );
    const [warning] = allIssues(plan);
    expect(codes(plan)).toEqual(['ReferenceToInactiveEntity']);
    expect(warning?.message).toContain('localId b');
    expect(warning?.entityRef).toBeUndefined();
  });

  it('warns only about references the batch adds, not those already stored', () => {
    const stored = storedRecord({
      parts: [
        namePart('name-1', 'A'),
        {
          partUuid: 'rel-1',
          type: 'PT_REL',
          items: [{ kind: 'entityRef', type: 'REL_ENTITY', uuid: 'r1', target: { kind: 'stored', ref: { entityId: 7 } } }],
        },
      ],
    });
    const plan = planBatch(
      [updateStored('s', stored, [{ op: 'setEntityType', entityType: 'X' }])],
      world({ records: [stored], entities: [summary(7, 'ERS_INVALID')] }),
      testEnv(),
    );
    expect(allIssues(plan)).toEqual([]);
  });
});
