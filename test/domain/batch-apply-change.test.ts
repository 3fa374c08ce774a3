// Each change applied to a record (domain/batch/apply-change.ts), through the planner.

import { describe, expect, it } from 'vitest';
import type { BatchPlan } from '../../domain/batch/index.ts';
import type { EntityRecord, Participant, RecordIssue } from '../../domain/model.ts';
import { allIssues, bodyPart, codes, NOW, namePart, planUpdate, storedRecord, str, USER } from './batch-fixtures.ts';

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

describe('planBatch: change errors', () => {
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
});
