// How the planner's issues are grouped (domain/batch/issues.ts).

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import { allIssues, storedRecord, testEnv, updateLocal, updateStored, world } from './batch-fixtures.ts';

describe('planBatch: issues', () => {
  it('groups issues per localId in order of first occurrence', () => {
    const record = storedRecord();
    const plan = planBatch(
      [
        updateStored('a', record, [{ op: 'removeIssue', issueUuid: 'x' }]),
        { kind: 'create', localId: 'n', entityType: 'PERSON', parts: [] },
        updateLocal('a', [{ op: 'removeIssue', issueUuid: 'y' }]),
      ],
      world({ records: [record] }),
      testEnv(),
    );
    expect(plan.issues.map((group) => [group.localId, group.issues.map((issue) => issue.issueCode)])).toEqual([
      ['a', ['UnknownIssue', 'UnknownIssue']],
      ['n', ['MissingNamePart']],
    ]);
    expect(new Set(allIssues(plan).map((issue) => issue.uuid)).size).toBe(3);
  });
});
