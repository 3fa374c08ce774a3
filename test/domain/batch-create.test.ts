// The rules of a create (domain/batch/create-rules.ts), through the planner.

import { describe, expect, it } from 'vitest';
import { planBatch } from '../support/batch-planning.ts';
import type { Item, Part } from '../../domain/model.ts';
import {
  allIssues,
  codes,
  create,
  NOW,
  namePart,
  storedRecord,
  str,
  summary,
  testEnv,
  updateLocal,
  USER,
  world,
} from './batch-fixtures.ts';

const everyKind: Item[] = [
  { kind: 'string', type: 'NOTE', value: 'a note' },
  { kind: 'enum', type: 'GENDER', spec: 'GT_FEMALE' },
  { kind: 'int', type: 'COUNT', value: '123456789012345678901234567890' },
  { kind: 'boolean', type: 'FLAG', value: true },
  { kind: 'unitDate', type: 'LIFE', from: '1850-01-01T00:00:00', to: '1905-12-31T23:59:59', format: 'Y-Y', fromEstimate: true },
  { kind: 'link', type: 'WEB', url: 'https://example.org', name: 'Example' },
  { kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'stored', ref: { entityId: 7 } } },
  { kind: 'binary', type: 'PHOTO', base64: 'AAEC' },
];

describe('planBatch: creates', () => {
  it('creates an entity with every item kind, filling in ids', () => {
    const parts: Part[] = [
      { partUuid: '', type: 'PT_NAME', items: [str('NM_MAIN', 'Nováková')] },
      { partUuid: 'body-x', type: 'PT_BODY', items: everyKind, extensionItems: [str('EXT', 'x', { uuid: 'ext-1' })] },
    ];
    const plan = planBatch([create('n1', parts)], world({ entities: [summary(7)] }), testEnv());

    expect(plan.hasErrors).toBe(false);
    expect(plan.hasWarnings).toBe(false);
    expect(plan.records).toHaveLength(1);
    const [record] = plan.records;
    expect(record?.isNew).toBe(true);
    expect(record?.contentChanged).toBe(true);
    expect(record?.before).toBeUndefined();

    const after = record!.after;
    expect(after.entityId).toBe(1000);
    expect(after.entityUuid).toMatch(/^00000000-0000-4000-8000-/);
    expect(after.state).toBe('ERS_NEW');
    expect(after.entityType).toBe('PERSON');
    expect(after.issues).toEqual([]);
    expect(after.parts[0]?.partUuid).not.toBe('');
    expect(after.parts[1]?.partUuid).toBe('body-x');
    for (const part of after.parts) for (const item of [...part.items, ...(part.extensionItems ?? [])]) expect(item.uuid).toBeTruthy();
    expect(after.parts[1]?.extensionItems?.[0]?.uuid).toBe('ext-1');

    const kinds = after.parts[1]!.items.map((item) => item.kind);
    expect(kinds).toEqual(['string', 'enum', 'int', 'boolean', 'unitDate', 'link', 'entityRef', 'binary']);
    const ref = after.parts[1]!.items[6];
    expect(ref).toMatchObject({ kind: 'entityRef', target: { kind: 'stored', ref: { entityId: 7, entityUuid: summary(7).entityUuid } } });
    expect(after.parts[1]!.items[2]).toMatchObject({ kind: 'int', value: '123456789012345678901234567890' });

    expect(after.revision).toEqual({
      rev: expect.any(String),
      metadataRev: expect.any(String),
      user: USER,
      createdAt: NOW,
      participants: [],
    });
    expect(after.revision.rev).not.toBe(after.revision.metadataRev);
    expect(after.revision.prevRev).toBeUndefined();

    expect(record!.changes).toEqual({
      entityId: 1000,
      entityUuid: after.entityUuid,
      created: { entityType: 'PERSON', parts: after.parts },
      changes: [],
    });
  });

  it('keeps a given entity UUID and does not mutate the commands', () => {
    const command = create('n1', [{ partUuid: '', type: 'PT_NAME', items: [str('NM_MAIN', 'A')] }], {
      entityUuid: 'cccccccc-0000-4000-8000-000000000001',
    });
    const copy = structuredClone(command);
    const plan = planBatch([command], world(), testEnv());
    expect(plan.records[0]?.after.entityUuid).toBe('cccccccc-0000-4000-8000-000000000001');
    expect(command).toEqual(copy);
  });

  it('records later updates of a create in the same revision, after the created form', () => {
    const plan = planBatch(
      [create('n1', [namePart('n', 'A')]), updateLocal('n1', [{ op: 'setEntityType', entityType: 'FAMILY' }])],
      world(),
      testEnv(),
    );
    const [record] = plan.records;
    expect(plan.records).toHaveLength(1);
    expect(record?.after.entityType).toBe('FAMILY');
    expect(record?.changes.created?.entityType).toBe('PERSON');
    expect(record?.changes.changes).toEqual([{ op: 'setEntityType', entityType: 'FAMILY' }]);
  });

  it('rejects an entity UUID that is stored already or used twice in the batch (DuplicateEntityUuid)', () => {
    const taken = storedRecord().entityUuid;
    const fresh = 'cccccccc-0000-4000-8000-000000000002';
    const plan = planBatch(
      [
        create('n1', [namePart('a', 'A')], { entityUuid: taken }),
        create('n2', [namePart('b', 'B')], { entityUuid: fresh }),
        create('n3', [namePart('c', 'C')], { entityUuid: fresh }),
      ],
      world({ takenUuids: [taken] }),
      testEnv(),
    );
    expect(allIssues(plan).map((issue) => [issue.localId, issue.issueCode, issue.entityRef])).toEqual([
      ['n1', 'DuplicateEntityUuid', { entityUuid: taken }],
      ['n3', 'DuplicateEntityUuid', { entityUuid: fresh }],
    ]);
    expect(allIssues(plan)[1]?.message).toContain('n2');
  });

  it('rejects a repeated localId', () => {
    const plan = planBatch([create('n1', [namePart('a', 'A')]), create('n1', [namePart('b', 'B')])], world(), testEnv());
    expect(codes(plan)).toEqual(['DuplicateIdentifier']);
    expect(plan.records).toHaveLength(1);
  });
});
