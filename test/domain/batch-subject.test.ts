// The problems of a command or reference that names no entity
// (domain/batch/subject-rules.ts), through the planner.

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import type { Part } from '../../domain/model.ts';
import {
  allIssues,
  codes,
  create,
  namePart,
  relTo,
  replacedBy,
  storedRecord,
  testEnv,
  updateLocal,
  updateStored,
  world,
} from './batch-fixtures.ts';

describe('planBatch: entities that do not exist', () => {
  it('reports a local reference to an undeclared localId (UnknownLocalReference)', () => {
    const plan = planBatch([create('a', [namePart('pa', 'A'), relTo('ghost')])], world(), testEnv());
    expect(allIssues(plan)).toEqual([
      expect.objectContaining({
        localId: 'a',
        issueCode: 'UnknownLocalReference',
        itemRef: expect.objectContaining({ type: 'REL_ENTITY' }),
      }),
    ]);
  });

  it('reports an update of a localId not declared before it', () => {
    const plan = planBatch(
      [updateLocal('later', [{ op: 'setEntityType', entityType: 'X' }]), create('later', [namePart('p', 'A')])],
      world(),
      testEnv(),
    );
    expect(codes(plan)).toEqual(['UnknownLocalReference']);
  });

  it('reports a stored reference that matches nothing (UnknownEntity)', () => {
    const part: Part = {
      partUuid: '',
      type: 'PT_REL',
      items: [{ kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'stored', ref: { entityId: 99 } } }],
    };
    const plan = planBatch([create('a', [namePart('pa', 'A'), part])], world(), testEnv());
    expect(allIssues(plan)).toEqual([expect.objectContaining({ issueCode: 'UnknownEntity', entityRef: { entityId: 99 } })]);
  });

  it('reports an update of an entity that is not stored (UnknownEntity)', () => {
    const plan = planBatch(
      [
        {
          kind: 'update',
          entity: { kind: 'stored', localId: 's1', entityUuid: 'dddddddd-0000-4000-8000-000000000001', rev: 'r' },
          changes: [],
        },
        updateLocal('s1', [{ op: 'setEntityType', entityType: 'X' }]),
      ],
      world(),
      testEnv(),
    );
    expect(allIssues(plan)).toEqual([
      expect.objectContaining({
        localId: 's1',
        severity: 'ERROR',
        issueCode: 'UnknownEntity',
        entityRef: { entityUuid: 'dddddddd-0000-4000-8000-000000000001' },
      }),
    ]);
    expect(plan.hasErrors).toBe(true);
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
