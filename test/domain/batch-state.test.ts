import { describe, expect, it } from 'vitest';
import { STATE_TRANSITIONS } from '../../domain/batch/index.ts';
import { planBatch } from '../support/batch-planning.ts';
import { ENTITY_STATES, type EntityState, type Part, type RecordChange } from '../../domain/model.ts';
import {
  allIssues,
  codes,
  create,
  expectOnlyWarning,
  namePart,
  storedRecord,
  summary,
  testEnv,
  updateLocal,
  updateStored,
  world,
} from './batch-fixtures.ts';

const replacedBy = (entityId: number): RecordChange => ({
  op: 'setState',
  state: 'ERS_REPLACED',
  replacement: { kind: 'stored', ref: { entityId } },
});

describe('planBatch: setState', () => {
  it('moves between the non-final states', () => {
    for (const from of ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID'] as const) {
      for (const to of ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID'] as const) {
        const record = storedRecord({ state: from });
        const plan = planBatch([updateStored('s', record, [{ op: 'setState', state: to }])], world({ records: [record] }), testEnv());
        expect(plan.hasErrors, `${from} -> ${to}`).toBe(false);
        expect(plan.records[0]?.after.state).toBe(to);
        expect(plan.records[0]?.contentChanged).toBe(true);
      }
    }
  });

  it('ERS_REPLACED is final', () => {
    expect(STATE_TRANSITIONS.ERS_REPLACED).toEqual([]);
    for (const to of ENTITY_STATES) {
      const record = storedRecord({ state: 'ERS_REPLACED', replacedBy: { entityId: 7 } });
      const change: RecordChange = to === 'ERS_REPLACED' ? replacedBy(7) : { op: 'setState', state: to };
      const plan = planBatch([updateStored('s', record, [change])], world({ records: [record], entities: [summary(7)] }), testEnv());
      expect(codes(plan), to).toEqual(['InvalidStateChange']);
      expect(plan.records[0]?.after.state).toBe('ERS_REPLACED');
    }
  });

  it('replaces by a stored entity, recording both of its ids', () => {
    const record = storedRecord();
    const plan = planBatch([updateStored('s', record, [replacedBy(7)])], world({ records: [record], entities: [summary(7)] }), testEnv());
    expect(allIssues(plan)).toEqual([]);
    const after = plan.records[0]?.after;
    expect(after?.state).toBe('ERS_REPLACED');
    expect(after?.replacedBy).toEqual({ entityId: 7, entityUuid: summary(7).entityUuid });
    expect(plan.records[0]?.changes.changes).toEqual([
      { op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'stored', ref: { entityId: 7, entityUuid: summary(7).entityUuid } } },
    ]);
  });

  it('replaces by an entity created in the same batch', () => {
    const record = storedRecord();
    const plan = planBatch(
      [
        updateStored('s', record, [{ op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'local', localId: 'n' } }]),
        create('n', [namePart('p', 'Successor')]),
      ],
      world({ records: [record] }),
      testEnv(),
    );
    expect(allIssues(plan)).toEqual([]);
    const created = plan.records[1]!.after;
    expect(plan.records[0]?.after.replacedBy).toEqual({ entityId: created.entityId, entityUuid: created.entityUuid });
  });

  it('rejects ERS_REPLACED without a replacement, a replacement with another state, and self-replacement', () => {
    const record = storedRecord();
    const plan = planBatch(
      [
        updateStored('a', record, [{ op: 'setState', state: 'ERS_REPLACED' }]),
        updateLocal('a', [{ op: 'setState', state: 'ERS_INVALID', replacement: { kind: 'stored', ref: { entityId: 7 } } }]),
        updateLocal('a', [replacedBy(1)]),
        updateLocal('a', [{ op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'local', localId: 'a' } }]),
      ],
      world({ records: [record], entities: [summary(7)] }),
      testEnv(),
    );
    expect(codes(plan)).toEqual(Array(4).fill('InvalidStateChange'));
    expect(plan.records[0]?.after.state).toBe('ERS_APPROVED');
  });

  it('rejects a replacement that does not exist', () => {
    const record = storedRecord();
    const plan = planBatch(
      [
        updateStored('a', record, [replacedBy(404)]),
        updateLocal('a', [{ op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'local', localId: 'zz' } }]),
      ],
      world({ records: [record] }),
      testEnv(),
    );
    expect(codes(plan)).toEqual(['UnknownEntity', 'UnknownLocalReference']);
  });
});

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
