import { describe, expect, it } from 'vitest';
import type { BatchPlan } from '../../domain/batch/index.ts';
import { planBatch } from '../support/batch-planning.ts';
import type { EntityRecord, Participant, RecordChange, RecordIssue } from '../../domain/model.ts';
import {
  allIssues,
  bodyPart,
  codes,
  NOW,
  namePart,
  storedRecord,
  str,
  testEnv,
  updateLocal,
  updateStored,
  USER,
  world,
} from './batch-fixtures.ts';

function planUpdate(changes: RecordChange[], record: EntityRecord = storedRecord()): BatchPlan {
  return planBatch([updateStored('s1', record, changes)], world({ records: [record] }), testEnv());
}

function afterOf(plan: BatchPlan): EntityRecord {
  expect(allIssues(plan)).toEqual([]);
  const after = plan.records[0]?.after;
  if (after === undefined) throw new Error('no planned record');
  return after;
}

const issue = (uuid: string): RecordIssue => ({ uuid, severity: 'WARNING', message: 'check this', from: '2024-06-01T00:00:00.000Z' });

describe('planBatch: each change', () => {
  it('newPart adds the part with uuids filled in', () => {
    const plan = planUpdate([{ op: 'newPart', part: { partUuid: '', type: 'PT_EVENT', parent: 'body-1', items: [str('EV', 'study')] } }]);
    const part = afterOf(plan).parts[2];
    expect(part).toMatchObject({ type: 'PT_EVENT', parent: 'body-1', items: [{ type: 'EV', value: 'study' }] });
    expect(part?.partUuid).toBeTruthy();
    expect(part?.items[0]?.uuid).toBeTruthy();
    expect(plan.records[0]?.changes.changes).toEqual([{ op: 'newPart', part }]);
  });

  it('newItems appends items to the part named by uuid, or by type when it is the only one', () => {
    const plan = planUpdate([
      { op: 'newItems', part: { type: 'PT_NAME', partUuid: 'name-1' }, items: [str('NM_SUP_GEN', 'painter')] },
      { op: 'newItems', part: { type: 'PT_BODY' }, items: [str('NOTE', 'n', { uuid: 'note-1' })] },
    ]);
    const after = afterOf(plan);
    expect(after.parts[0]?.items.map((item) => item.type)).toEqual(['NM_MAIN', 'NM_MINOR', 'NM_SUP_GEN']);
    expect(after.parts[0]?.items[2]?.uuid).toBeTruthy();
    expect(after.parts[1]?.items[1]?.uuid).toBe('note-1');
    expect(plan.records[0]?.changes.changes[1]).toEqual({
      op: 'newItems',
      part: { type: 'PT_BODY', partUuid: 'body-1' },
      items: [str('NOTE', 'n', { uuid: 'note-1' })],
    });
  });

  it('updateItems replaces items matched by uuid, else by type and spec, keeping their uuids', () => {
    const plan = planUpdate([
      {
        op: 'updateItems',
        part: { type: 'PT_NAME', partUuid: 'name-1' },
        items: [str('NM_MAIN', 'Nowak', { uuid: 'name-1-main' }), str('NM_MINOR', 'Johann')],
      },
    ]);
    const after = afterOf(plan);
    expect(after.parts[0]?.items).toEqual([
      str('NM_MAIN', 'Nowak', { uuid: 'name-1-main' }),
      str('NM_MINOR', 'Johann', { uuid: 'name-1-minor' }),
    ]);
    expect(plan.records[0]?.changes.changes[0]).toMatchObject({ items: [{ uuid: 'name-1-main' }, { uuid: 'name-1-minor' }] });
  });

  it('deletePart removes the part, its sub-parts and a preferred-name pointer to it', () => {
    const record = storedRecord({
      preferredNamePart: 'name-2',
      parts: [namePart('name-1', 'A'), namePart('name-2', 'B'), { partUuid: 'sub', type: 'PT_REL', parent: 'name-2', items: [] }],
    });
    const after = afterOf(planUpdate([{ op: 'deletePart', part: { type: 'PT_NAME', partUuid: 'name-2' } }], record));
    expect(after.parts.map((part) => part.partUuid)).toEqual(['name-1']);
    expect(after.preferredNamePart).toBeUndefined();
  });

  it('deleteItems removes the named items, also extension items', () => {
    const record = storedRecord({
      parts: [namePart('name-1', 'A', 'B'), { ...bodyPart('body-1', 'x'), extensionItems: [str('EXT', 'e', { uuid: 'ext-1' })] }],
    });
    const plan = planUpdate(
      [
        { op: 'deleteItems', part: { type: 'PT_NAME', partUuid: 'name-1' }, items: [{ type: 'NM_MINOR' }] },
        { op: 'deleteItems', part: { type: 'PT_BODY', partUuid: 'body-1' }, items: [{ type: 'EXT', uuid: 'ext-1' }] },
      ],
      record,
    );
    const after = afterOf(plan);
    expect(after.parts[0]?.items.map((item) => item.type)).toEqual(['NM_MAIN']);
    expect(after.parts[1]?.extensionItems).toEqual([]);
    expect(plan.records[0]?.changes.changes[0]).toMatchObject({ items: [{ type: 'NM_MINOR', uuid: 'name-1-minor' }] });
  });

  it('setEntityType and setPreferredName change the record', () => {
    const record = storedRecord({ parts: [namePart('name-1', 'A'), namePart('name-2', 'B')] });
    const after = afterOf(
      planUpdate(
        [
          { op: 'setEntityType', entityType: 'FAMILY' },
          { op: 'setPreferredName', partUuid: 'name-2' },
        ],
        record,
      ),
    );
    expect(after.entityType).toBe('FAMILY');
    expect(after.preferredNamePart).toBe('name-2');
  });

  it('addParticipant updates lastChange of the same user and role, or adds one', () => {
    const editor: Participant = { role: 'EDITOR', lastChange: '2024-01-01T00:00:00.000Z', user: { id: 'u1', name: 'One' } };
    const record = storedRecord();
    record.revision.participants = [editor];
    const after = afterOf(
      planUpdate(
        [
          { op: 'addParticipant', participant: { ...editor, lastChange: '2025-02-01T00:00:00.000Z' } },
          { op: 'addParticipant', participant: { ...editor, role: 'APPROVER' } },
        ],
        record,
      ),
    );
    expect(after.revision.participants).toEqual([
      { ...editor, lastChange: '2025-02-01T00:00:00.000Z' },
      { ...editor, role: 'APPROVER' },
    ]);
    expect(record.revision.participants).toEqual([editor]);
  });

  it('addIssue, removeIssue and addIssueStatus manage the issues', () => {
    const record = storedRecord({ issues: [issue('i-1'), issue('i-2')] });
    const status = { resolution: 'IR_REVISION_OK' as const, user: { id: 'u1', name: 'One' }, updated: NOW, note: 'fine' };
    const after = afterOf(
      planUpdate(
        [
          {
            op: 'addIssue',
            issue: { uuid: 'i-3', severity: 'ERROR', message: 'fix the date', partRef: { type: 'PT_BODY', partUuid: 'body-1' } },
          },
          { op: 'removeIssue', issueUuid: 'i-1' },
          { op: 'addIssueStatus', issueUuid: 'i-2', status },
        ],
        record,
      ),
    );
    expect(after.issues).toEqual([
      { ...issue('i-2'), status },
      {
        uuid: 'i-3',
        severity: 'ERROR',
        message: 'fix the date',
        partRef: { type: 'PT_BODY', partUuid: 'body-1' },
        from: NOW,
        fromRev: 'rev-1',
      },
    ]);
  });
});

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
});

describe('planBatch: update errors', () => {
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

  it('reports unknown or ambiguous parts (UnknownPart)', () => {
    const record = storedRecord({ parts: [namePart('name-1', 'A'), namePart('name-2', 'B'), bodyPart('body-1', 'x')] });
    const plan = planUpdate(
      [
        { op: 'deletePart', part: { type: 'PT_EVENT', partUuid: 'nope' } },
        { op: 'newItems', part: { type: 'PT_NAME' }, items: [str('NM_MINOR', 'x')] },
        { op: 'updateItems', part: { type: 'PT_NAME', partUuid: 'body-1' }, items: [] },
        { op: 'deleteItems', part: { type: 'PT_CRE' }, items: [] },
        { op: 'setPreferredName', partUuid: 'body-1' },
        { op: 'setPreferredName', partUuid: 'nope' },
        { op: 'newPart', part: { partUuid: '', type: 'PT_REL', parent: 'nope', items: [] } },
      ],
      record,
    );
    expect(codes(plan)).toEqual(Array(7).fill('UnknownPart'));
    expect(allIssues(plan)[0]?.partRef).toEqual({ type: 'PT_EVENT', partUuid: 'nope' });
    expect(allIssues(plan)[1]?.message).toContain('2 parts of type PT_NAME');
    expect(plan.records[0]?.after.parts).toEqual(record.parts);
    expect(plan.records[0]?.changes.changes).toEqual([]);
  });

  it('reports unknown or ambiguous items (UnknownItem) and applies none of the op', () => {
    const record = storedRecord({
      parts: [
        {
          partUuid: 'body-1',
          type: 'PT_BODY',
          items: [str('NOTE', 'a', { uuid: 'n1' }), str('NOTE', 'b', { uuid: 'n2' }), str('X', 'x', { uuid: 'x1' })],
        },
        namePart('name-1', 'A'),
      ],
    });
    const plan = planUpdate(
      [
        { op: 'updateItems', part: { type: 'PT_BODY' }, items: [str('X', 'changed'), str('NOTE', 'which?')] },
        { op: 'deleteItems', part: { type: 'PT_BODY' }, items: [{ type: 'X', uuid: 'x1' }, { type: 'MISSING' }] },
        { op: 'deleteItems', part: { type: 'PT_BODY' }, items: [{ type: 'NOTE', uuid: 'x1' }] },
      ],
      record,
    );
    expect(codes(plan)).toEqual(['UnknownItem', 'UnknownItem', 'UnknownItem']);
    expect(allIssues(plan)[0]).toMatchObject({ partRef: { type: 'PT_BODY', partUuid: 'body-1' }, itemRef: { type: 'NOTE' } });
    expect(allIssues(plan)[0]?.message).toContain('2 items');
    expect(plan.records[0]?.after.parts[0]?.items).toEqual(record.parts[0]?.items);
  });

  it('reports removeIssue and addIssueStatus of an unknown issue (UnknownIssue)', () => {
    const plan = planUpdate([
      { op: 'removeIssue', issueUuid: 'i-x' },
      { op: 'addIssueStatus', issueUuid: 'i-y', status: { resolution: 'IR_FIX_NEEDED', user: USER, updated: NOW } },
    ]);
    expect(codes(plan)).toEqual(['UnknownIssue', 'UnknownIssue']);
  });

  it('reports uuids that are taken already (DuplicateIdentifier)', () => {
    const record = storedRecord({ issues: [issue('i-1')] });
    const plan = planUpdate(
      [
        { op: 'newPart', part: namePart('name-1', 'Again') },
        { op: 'newItems', part: { type: 'PT_BODY' }, items: [str('NOTE', 'n', { uuid: 'name-1-main' })] },
        { op: 'addIssue', issue: { uuid: 'i-1', severity: 'ERROR', message: 'dup' } },
      ],
      record,
    );
    expect(codes(plan)).toEqual(['DuplicateIdentifier', 'DuplicateIdentifier', 'DuplicateIdentifier', 'DuplicateIdentifier']);
  });

  it('reports an update that removes the last PT_NAME part (MissingNamePart)', () => {
    const plan = planUpdate([{ op: 'deletePart', part: { type: 'PT_NAME' } }]);
    expect(allIssues(plan)).toEqual([expect.objectContaining({ localId: 's1', issueCode: 'MissingNamePart' })]);
  });

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
