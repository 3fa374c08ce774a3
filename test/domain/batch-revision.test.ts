// The rules of revisions (domain/batch/revision-rules.ts), through the planner.

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import { allIssues, NOW, namePart, planUpdate, storedRecord, testEnv, updateLocal, updateStored, USER, world } from './batch-fixtures.ts';

describe('planBatch: revisions', () => {
  it('a content change starts a new rev and metadataRev chained to the old rev', () => {
    const plan = planUpdate([{ op: 'setEntityType', entityType: 'FAMILY' }]);
    const [record] = plan.records;
    expect(record?.contentChanged).toBe(true);
    expect(record?.isNew).toBe(false);
    expect(record?.before?.entityType).toBe('PERSON');
    const revision = record!.after.revision;
    expect(revision.prevRev).toBe('rev-1');
    expect(revision.rev).not.toBe('rev-1');
    expect(revision.metadataRev).not.toBe('meta-1');
    expect(revision.metadataRev).not.toBe(revision.rev);
    expect(revision.createdAt).toBe(NOW);
    expect(revision.user).toEqual(USER);
  });

  it('a metadata-only change keeps rev, prevRev, time and user and gets a new metadataRev', () => {
    const plan = planUpdate([{ op: 'addIssue', issue: { uuid: 'i-9', severity: 'WARNING', message: 'hm' } }]);
    const [record] = plan.records;
    expect(record?.contentChanged).toBe(false);
    const { revision } = record!.after;
    expect(revision).toMatchObject({ rev: 'rev-1', prevRev: 'rev-0', createdAt: '2024-01-01T00:00:00.000Z', user: { id: 'old-user' } });
    expect(revision.metadataRev).not.toBe('meta-1');
  });

  it('applies several updates of one entity in order, as one revision', () => {
    const record = storedRecord();
    const plan = planBatch(
      [
        updateStored('s1', record, [{ op: 'newPart', part: namePart('name-2', 'Second') }]),
        updateLocal('s1', [{ op: 'setPreferredName', partUuid: 'name-2' }]),
        updateStored('s1-again', record, [{ op: 'deletePart', part: { type: 'PT_NAME', partUuid: 'name-1' } }]),
      ],
      world({ records: [record] }),
      testEnv(),
    );
    expect(allIssues(plan)).toEqual([]);
    expect(plan.records).toHaveLength(1);
    const [planned] = plan.records;
    expect(planned?.localId).toBe('s1');
    expect(planned?.after.parts.map((part) => part.partUuid)).toEqual(['body-1', 'name-2']);
    expect(planned?.after.preferredNamePart).toBe('name-2');
    expect(planned?.changes.changes.map((change) => change.op)).toEqual(['newPart', 'setPreferredName', 'deletePart']);
    expect(planned?.after.revision.prevRev).toBe('rev-1');
    expect(planned?.before).toBe(record);
    expect(record.parts).toHaveLength(2);
  });

  it('keeps records in first-touch order', () => {
    const one = storedRecord();
    const two = storedRecord({ entityId: 2, entityUuid: 'aaaaaaaa-0000-4000-8000-000000000002' });
    const plan = planBatch(
      [
        updateStored('x2', two, [{ op: 'setEntityType', entityType: 'A' }]),
        { kind: 'create', localId: 'n', entityType: 'PERSON', parts: [namePart('p', 'N')] },
        updateStored('x1', one, [{ op: 'setEntityType', entityType: 'B' }]),
        updateLocal('x2', [{ op: 'setEntityType', entityType: 'C' }]),
      ],
      world({ records: [one, two] }),
      testEnv(),
    );
    expect(plan.records.map((record) => record.localId)).toEqual(['x2', 'n', 'x1']);
    expect(plan.records[0]?.after.entityType).toBe('C');
  });

  it('reports an update based on an old revision (StaleRevision), checked against the rev at batch start', () => {
    const record = storedRecord();
    const plan = planBatch(
      [
        updateStored('a', record, [{ op: 'setEntityType', entityType: 'X' }]),
        updateStored('b', record, [{ op: 'setEntityType', entityType: 'Y' }]),
        updateStored('c', record, [{ op: 'setEntityType', entityType: 'Z' }], 'rev-0'),
      ],
      world({ records: [record] }),
      testEnv(),
    );
    expect(allIssues(plan).map((issue) => [issue.localId, issue.issueCode])).toEqual([['c', 'StaleRevision']]);
    expect(allIssues(plan)[0]?.entityRef).toEqual({ entityId: 1, entityUuid: record.entityUuid });
  });
});
