// The name rule (domain/batch/name-part-rules.ts), through the planner.

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import { allIssues, create, planUpdate, str, testEnv, world } from './batch-fixtures.ts';

describe('planBatch: the name part', () => {
  it('requires a PT_NAME part (MissingNamePart)', () => {
    const plan = planBatch([create('n1', [{ partUuid: '', type: 'PT_BODY', items: [str('BRIEF_DESC', 'x')] }])], world(), testEnv());
    expect(plan.hasErrors).toBe(true);
    expect(allIssues(plan)).toEqual([
      expect.objectContaining({ localId: 'n1', severity: 'ERROR', issueCode: 'MissingNamePart', partRef: { type: 'PT_NAME' } }),
    ]);
  });

  it('reports an update that removes the last PT_NAME part (MissingNamePart)', () => {
    const plan = planUpdate([{ op: 'deletePart', part: { type: 'PT_NAME' } }]);
    expect(allIssues(plan)).toEqual([expect.objectContaining({ localId: 's1', issueCode: 'MissingNamePart' })]);
  });
});
