// The rules of state changes (domain/batch/state-rules.ts), through the planner.

import { describe, expect, it } from 'vitest';
import { STATE_TRANSITIONS } from '../../domain/batch/index.ts';
import { planBatch } from '../support/batch-planning.ts';
import { ENTITY_STATES, type RecordChange } from '../../domain/model.ts';
import {
  allIssues,
  codes,
  create,
  namePart,
  replacedBy,
  storedRecord,
  summary,
  testEnv,
  updateLocal,
  updateStored,
  world,
} from './batch-fixtures.ts';

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
});
