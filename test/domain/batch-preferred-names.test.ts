import { describe, expect, it } from 'vitest';
import { NAME_HOLDER_STATES, NAME_KEY_SEPARATOR, preferredNameRule } from '../../domain/batch/preferred-names.ts';
import { planBatch } from '../support/batch-planning.ts';
import { addPreferredNameWarnings, preferredNameKeys, preferredNameWarnings, type NameHolders } from '../support/preferred-name-check.ts';
import { allIssues, create, expectOnlyWarning, namePart, storedRecord, testEnv, updateStored, world } from './batch-fixtures.ts';

const noHolders: NameHolders = () => [];
const holdersOf =
  (table: Record<string, number[]>): NameHolders =>
  (entityType, normalizedName) =>
    table[`${entityType}:${normalizedName}`] ?? [];

describe('who holds a name', () => {
  it("an entity in ERS_NEW or ERS_APPROVED; one in ERS_INVALID or ERS_REPLACED stands in no one's way", () => {
    expect(NAME_HOLDER_STATES).toEqual(['ERS_NEW', 'ERS_APPROVED']);
    const states = ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID'] as const;
    const records = states.map((state, index) =>
      storedRecord({ entityId: index + 1, entityUuid: `aaaaaaaa-0000-4000-8000-00000000000${index + 1}`, state }),
    );
    const plan = planBatch(
      records.map((record) => updateStored(`s${record.entityId}`, record, [{ op: 'setEntityType', entityType: 'FAMILY' }])),
      world({ records }),
      testEnv(),
    );
    expect(preferredNameKeys(plan).map((key) => key.localId)).toEqual(['s1', 's2']);
  });
});

describe('preferredNameKeys', () => {
  it('lists new records and records whose name, type or activity changed', () => {
    const same = storedRecord();
    const renamed = storedRecord({ entityId: 2, entityUuid: 'aaaaaaaa-0000-4000-8000-000000000002' });
    const retyped = storedRecord({ entityId: 3, entityUuid: 'aaaaaaaa-0000-4000-8000-000000000003' });
    const reactivated = storedRecord({ entityId: 4, entityUuid: 'aaaaaaaa-0000-4000-8000-000000000004', state: 'ERS_INVALID' });
    const invalidated = storedRecord({ entityId: 5, entityUuid: 'aaaaaaaa-0000-4000-8000-000000000005' });
    const plan = planBatch(
      [
        create('new', [namePart('p', 'Dvořák', 'Antonín')]),
        updateStored('same', same, [
          { op: 'updateItems', part: { type: 'PT_NAME' }, items: [{ kind: 'string', type: 'NM_MAIN', value: 'NOVAK' }] },
        ]),
        updateStored('renamed', renamed, [
          { op: 'updateItems', part: { type: 'PT_NAME' }, items: [{ kind: 'string', type: 'NM_MAIN', value: 'Svoboda' }] },
        ]),
        updateStored('retyped', retyped, [{ op: 'setEntityType', entityType: 'FAMILY' }]),
        updateStored('reactivated', reactivated, [{ op: 'setState', state: 'ERS_APPROVED' }]),
        updateStored('invalidated', invalidated, [
          { op: 'updateItems', part: { type: 'PT_NAME' }, items: [{ kind: 'string', type: 'NM_MAIN', value: 'X' }] },
          { op: 'setState', state: 'ERS_INVALID' },
        ]),
      ],
      world({ records: [same, renamed, retyped, reactivated, invalidated] }),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    expect(preferredNameKeys(plan)).toEqual([
      { localId: 'new', entityId: 1000, entityType: 'PERSON', normalizedName: 'dvorak, antonin' },
      { localId: 'renamed', entityId: 2, entityType: 'PERSON', normalizedName: 'svoboda, jan' },
      { localId: 'retyped', entityId: 3, entityType: 'FAMILY', normalizedName: 'novak, jan' },
      { localId: 'reactivated', entityId: 4, entityType: 'PERSON', normalizedName: 'novak, jan' },
    ]);
  });
});

describe('preferredNameWarnings', () => {
  it('warns each checked record whose key another record of the batch holds, an unchanged one included', () => {
    const same = storedRecord();
    const plan = planBatch(
      [
        updateStored('same', same, [
          { op: 'updateItems', part: { type: 'PT_NAME' }, items: [{ kind: 'string', type: 'NM_MAIN', value: 'NOVAK' }] },
        ]),
        create('b', [namePart('pb', 'Dvořák', 'Antonín')]),
        create('c', [namePart('pc', 'Novák', 'Jan')]),
        create('d', [namePart('pd', 'DVORAK', 'antonin')]),
        create('e', [namePart('pe', 'Praha')], { entityType: 'GEO' }),
      ],
      world({ records: [same] }),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    expect(preferredNameKeys(plan).map((key) => key.localId)).toEqual(['b', 'c', 'd', 'e']);
    const warnings = preferredNameWarnings(plan, noHolders, testEnv().newUuid);
    expect(warnings.map((group) => [group.localId, group.issues.map((issue) => [issue.issueCode, issue.partRef])])).toEqual([
      ['b', [['PreferredNameExists', { type: 'PT_NAME', partUuid: 'pb' }]]],
      ['c', [['PreferredNameExists', { type: 'PT_NAME', partUuid: 'pc' }]]],
      ['d', [['PreferredNameExists', { type: 'PT_NAME', partUuid: 'pd' }]]],
    ]);
  });
});

describe('addPreferredNameWarnings', () => {
  it('warns when another current entity of the type holds the name (PreferredNameExists)', () => {
    const plan = planBatch([create('n', [namePart('p', 'Nováková', 'Marie')])], world(), testEnv());
    const warned = addPreferredNameWarnings(plan, holdersOf({ 'PERSON:novakova, marie': [42, 17] }), testEnv().newUuid);
    expectOnlyWarning(warned, {
      localId: 'n',
      issueCode: 'PreferredNameExists',
      entityRef: { entityId: 17 },
      partRef: { type: 'PT_NAME', partUuid: 'p' },
    });
    expect(allIssues(warned)[0]?.message).toContain('"Nováková, Marie": entity 17, entity 42');
    expect(plan.issues).toEqual([]);
  });

  it('does not count the entity itself, nor a holder that this batch renames', () => {
    const self = storedRecord({ state: 'ERS_INVALID' });
    const other = storedRecord({ entityId: 2, entityUuid: 'aaaaaaaa-0000-4000-8000-000000000002' });
    const plan = planBatch(
      [
        updateStored('self', self, [{ op: 'setState', state: 'ERS_APPROVED' }]),
        updateStored('other', other, [
          { op: 'updateItems', part: { type: 'PT_NAME' }, items: [{ kind: 'string', type: 'NM_MAIN', value: 'Else' }] },
        ]),
      ],
      world({ records: [self, other] }),
      testEnv(),
    );
    const warned = addPreferredNameWarnings(plan, holdersOf({ 'PERSON:novak, jan': [1, 2] }), testEnv().newUuid);
    expect(allIssues(warned)).toEqual([]);
  });

  it('warns about two records of the batch ending with the same type and name', () => {
    const plan = planBatch(
      [create('a', [namePart('pa', 'Novák', 'Jan')]), create('b', [namePart('pb', 'NOVAK', 'jan')])],
      world(),
      testEnv(),
    );
    const warned = addPreferredNameWarnings(plan, noHolders, testEnv().newUuid);
    expect(allIssues(warned).map((issue) => [issue.localId, issue.issueCode, issue.entityRef])).toEqual([
      ['a', 'PreferredNameExists', undefined],
      ['b', 'PreferredNameExists', undefined],
    ]);
    expect(allIssues(warned)[0]?.message).toContain('localId b');
  });

  it('ignores the same name under another entity type', () => {
    const plan = planBatch(
      [create('a', [namePart('pa', 'Praha')]), create('b', [namePart('pb', 'Praha')], { entityType: 'GEO' })],
      world(),
      testEnv(),
    );
    expect(allIssues(addPreferredNameWarnings(plan, holdersOf({ 'CORP:praha': [5] }), testEnv().newUuid))).toEqual([]);
  });

  it('adds to the issues already planned', () => {
    const plan = planBatch(
      [create('a', [namePart('pa', 'A')]), create('b', [{ partUuid: '', type: 'PT_BODY', items: [] }])],
      world(),
      testEnv(),
    );
    const warned = addPreferredNameWarnings(plan, holdersOf({ 'PERSON:a': [9] }), testEnv().newUuid);
    expect(warned.issues.map((group) => [group.localId, group.issues.map((issue) => issue.issueCode)])).toEqual([
      ['b', ['MissingNamePart']],
      ['a', ['PreferredNameExists']],
    ]);
    expect(warned.hasErrors).toBe(true);
    expect(warned.hasWarnings).toBe(true);
  });
});

describe("the pipeline's end rule", () => {
  it('judges the staged entries the apply reads back as the whole-batch reference does, in its order', () => {
    const same = storedRecord();
    const renamed = storedRecord({ entityId: 2, entityUuid: 'aaaaaaaa-0000-4000-8000-000000000002' });
    const plan = planBatch(
      [
        updateStored('same', same, [
          { op: 'updateItems', part: { type: 'PT_NAME' }, items: [{ kind: 'string', type: 'NM_MAIN', value: 'NOVAK' }] },
        ]),
        create('b', [namePart('pb', 'Dvořák', 'Antonín')]),
        create('c', [namePart('pc', 'Novák', 'Jan')]),
        updateStored('renamed', renamed, [
          { op: 'updateItems', part: { type: 'PT_NAME' }, items: [{ kind: 'string', type: 'NM_MAIN', value: 'Svoboda' }] },
        ]),
        create('d', [namePart('pd', 'DVORAK', 'antonin')]),
        create('e', [namePart('', 'Praha')], { entityType: 'GEO' }),
        create('f', [namePart('pf', 'Alone')]),
      ],
      world({ records: [same, renamed] }),
      testEnv(),
    );
    expect(plan.hasErrors).toBe(false);
    const table: Record<string, number[]> = { 'GEO:praha': [7, 3, 7], 'PERSON:svoboda, jan': [2, 11], 'PERSON:alone': [2] };
    const holders = holdersOf(table);
    const planned = new Set(plan.records.map((record) => record.after.entityId));
    const entries = plan.records.flatMap((record) => preferredNameRule.entryOf(record) ?? []);
    const fixedUuids = () => {
      let next = 0;
      return () => `00000000-0000-4000-8000-${String(next++).padStart(12, '0')}`;
    };
    const expected = preferredNameWarnings(plan, holders, fixedUuids());
    const staged = preferredNameRule.judge(
      entries,
      (key) => holders(...(key.split(NAME_KEY_SEPARATOR) as [string, string])),
      (entityId) => planned.has(entityId),
      fixedUuids(),
    );
    expect(staged).toEqual(expected);
    expect(staged.map((group) => group.localId)).toEqual(['b', 'c', 'renamed', 'd', 'e']);
  });
});
