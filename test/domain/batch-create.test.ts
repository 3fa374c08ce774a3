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

  it('requires a PT_NAME part (MissingNamePart)', () => {
    const plan = planBatch([create('n1', [{ partUuid: '', type: 'PT_BODY', items: [str('BRIEF_DESC', 'x')] }])], world(), testEnv());
    expect(plan.hasErrors).toBe(true);
    expect(allIssues(plan)).toEqual([
      expect.objectContaining({ localId: 'n1', severity: 'ERROR', issueCode: 'MissingNamePart', partRef: { type: 'PT_NAME' } }),
    ]);
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

  it('rejects a repeated localId', () => {
    const plan = planBatch([create('n1', [namePart('a', 'A')]), create('n1', [namePart('b', 'B')])], world(), testEnv());
    expect(codes(plan)).toEqual(['DuplicateIdentifier']);
    expect(plan.records).toHaveLength(1);
  });
});

describe('planBatch: local references', () => {
  const relTo = (localId: string): Part => ({
    partUuid: '',
    type: 'PT_REL',
    items: [{ kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'local', localId } }],
  });

  it('resolves references between creates, also forward ones, to the created ids', () => {
    const plan = planBatch(
      [create('a', [namePart('pa', 'A'), relTo('b')]), create('b', [namePart('pb', 'B'), relTo('a')])],
      world(),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    const [a, b] = plan.records;
    const targetOf = (record: typeof a) => record?.after.parts[1]?.items[0];
    expect(targetOf(a)).toMatchObject({
      target: { kind: 'stored', ref: { entityId: b?.after.entityId, entityUuid: b?.after.entityUuid } },
    });
    expect(targetOf(b)).toMatchObject({
      target: { kind: 'stored', ref: { entityId: a?.after.entityId, entityUuid: a?.after.entityUuid } },
    });
    expect(a?.changes.created?.parts[1]?.items[0]).toEqual(targetOf(a));
  });

  it('resolves a local reference to a stored entity declared by an update', () => {
    const stored = storedRecord();
    const plan = planBatch(
      [
        create('a', [namePart('pa', 'A'), relTo('s')]),
        {
          kind: 'update',
          entity: { kind: 'stored', localId: 's', entityId: 1, rev: 'rev-1' },
          changes: [{ op: 'setEntityType', entityType: 'PERSON' }],
        },
      ],
      world({ records: [stored] }),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    expect(plan.records[0]?.after.parts[1]?.items[0]).toMatchObject({ target: { ref: { entityId: 1, entityUuid: stored.entityUuid } } });
  });

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

  it('rejects a stored reference whose id and uuid name different entities', () => {
    const part: Part = {
      partUuid: '',
      type: 'PT_REL',
      items: [
        { kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'stored', ref: { entityId: 7, entityUuid: summary(8).entityUuid } } },
      ],
    };
    const plan = planBatch([create('a', [namePart('pa', 'A'), part])], world({ entities: [summary(7), summary(8)] }), testEnv());
    expect(codes(plan)).toEqual(['UnknownEntity']);
  });

  it('finds a create of the batch by the UUID the client gave it', () => {
    const uuid = 'cccccccc-0000-4000-8000-000000000009';
    const part: Part = {
      partUuid: '',
      type: 'PT_REL',
      items: [{ kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'stored', ref: { entityUuid: uuid } } }],
    };
    const plan = planBatch(
      [create('a', [namePart('pa', 'A'), part]), create('b', [namePart('pb', 'B')], { entityUuid: uuid })],
      world(),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    expect(plan.records[0]?.after.parts[1]?.items[0]).toMatchObject({ target: { ref: { entityId: 1001, entityUuid: uuid } } });
  });
});
