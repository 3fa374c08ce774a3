// The checks of new parts (domain/batch/parts.ts), through the planner. Finding
// the parts and items a change names is tested with the changes
// (batch-apply-change.test.ts).

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import { allIssues, codes, create, namePart, str, testEnv, world } from './batch-fixtures.ts';

describe('planBatch: new parts', () => {
  it('rejects repeated part or item uuids and unknown parents', () => {
    const plan = planBatch(
      [
        create('n1', [
          namePart('p1', 'A'),
          { partUuid: 'p1', type: 'PT_BODY', items: [] },
          { partUuid: 'p2', type: 'PT_BODY', items: [str('X', '1', { uuid: 'p1-main' })] },
          { partUuid: 'p3', type: 'PT_REL', parent: 'nowhere', items: [] },
        ]),
      ],
      world(),
      testEnv(),
    );
    expect(codes(plan)).toEqual(['DuplicateIdentifier', 'DuplicateIdentifier', 'UnknownPart']);
    expect(allIssues(plan)[2]?.partRef).toEqual({ type: 'PT_REL', partUuid: 'p3' });
  });

  it('accepts a parent that is another part of the same create', () => {
    const plan = planBatch(
      [create('n1', [namePart('p1', 'A'), { partUuid: 'p2', type: 'PT_REL', parent: 'p1', items: [] }])],
      world(),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
  });
});
