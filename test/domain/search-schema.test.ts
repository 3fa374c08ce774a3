import { describe, expect, it } from 'vitest';
import { MAX_CONDITION_DEPTH, queryParamsSchema } from '../../services/search/index.ts';

const v2 = queryParamsSchema({ version: 'v2' });
const v1 = queryParamsSchema({ version: 'v1' });
const paths = (result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[] }> } }) =>
  result.error?.issues.map((issue) => issue.path.join('.'));

describe('queryParamsSchema', () => {
  it('accepts a full v2 query and fills the default comparator', () => {
    const parsed = v2.parse({
      types: ['PERSON'],
      state: ['ERS_NEW'],
      user: 'u-1',
      userRole: 'EDITOR',
      cond: {
        condType: 'and',
        conds: [
          { condType: 'value', itemTypes: ['NM_MAIN'], value: 'Novák' },
          { condType: 'index', name: 'name', comparator: 'CT_CONTAINS', value: 'x' },
        ],
      },
    });
    expect(parsed.cond).toEqual({
      condType: 'and',
      conds: [
        { condType: 'value', itemTypes: ['NM_MAIN'], value: 'Novák', comparator: 'CT_EQ' },
        { condType: 'index', name: 'name', comparator: 'CT_CONTAINS', value: 'x' },
      ],
    });
  });

  it('reads the real v2 QueryParamsDef: upper-case condTypes, RS_* states, userRoles with userUuid or userName', () => {
    const parsed = v2.parse({
      types: ['PERSON'],
      state: ['RS_NEW', 'RS_APPROVED'],
      userRoles: 'SENDER',
      userUuid: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
      userName: 'Jana Nováková',
      cond: {
        condType: 'AND',
        conds: [
          {
            condType: 'PART',
            partType: 'PT_PREF_NAME',
            cond: { condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: 'nov' },
          },
          { condType: 'NOT', cond: { condType: 'VALUE', itemTypes: ['NM_MAIN'], comparator: 'CT_STARTS_WITH', value: 'x' } },
          { condType: 'OR', conds: [{ condType: 'INDEX', name: 'SHORT_NAME', comparator: 'CT_ENDS_WITH', value: 'y' }] },
        ],
      },
    });
    expect(parsed).toEqual({
      types: ['PERSON'],
      state: ['ERS_NEW', 'ERS_APPROVED'],
      userUuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      userName: 'Jana Nováková',
      userRole: 'SENDER',
      cond: {
        condType: 'and',
        conds: [
          {
            condType: 'part',
            partType: 'PT_PREF_NAME',
            cond: { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: 'nov' },
          },
          { condType: 'not', cond: { condType: 'value', itemTypes: ['NM_MAIN'], comparator: 'CT_STARTS_WITH', value: 'x' } },
          { condType: 'or', conds: [{ condType: 'index', name: 'SHORT_NAME', comparator: 'CT_ENDS_WITH', value: 'y' }] },
        ],
      },
    });
  });

  it('reads the v1 comparator spellings as the v2 ones, in either version', () => {
    for (const schema of [v1, v2]) {
      const cond = (comparator: string) => schema.parse({ cond: { condType: 'value', comparator, value: 'a' } }).cond;
      expect(cond('CT_START_WITH')).toMatchObject({ comparator: 'CT_STARTS_WITH' });
      expect(cond('CT_END_WITH')).toMatchObject({ comparator: 'CT_ENDS_WITH' });
      expect(cond('CT_CONTAIN')).toMatchObject({ comparator: 'CT_CONTAINS' });
      expect(cond('CT_GTE')).toMatchObject({ comparator: 'CT_GTE' });
    }
    expect(paths(v2.safeParse({ cond: { condType: 'Value', value: 'a' } }))).toEqual(['cond.condType']);
  });

  it('takes userRole as another name of userRoles, but not a different role under each', () => {
    expect(v2.parse({ userRole: 'APPROVER' })).toEqual({ userRole: 'APPROVER' });
    expect(v2.parse({ userRoles: 'EDITOR', userRole: 'EDITOR' })).toEqual({ userRole: 'EDITOR' });
    // userRoles, the real field, wins over the project's earlier userRole.
    expect(v2.parse({ userRoles: 'EDITOR', userRole: 'APPROVER' })).toEqual({ userRole: 'EDITOR' });
    expect(paths(v2.safeParse({ userRoles: 'OWNER' }))).toEqual(['userRoles']);
    expect(paths(v2.safeParse({ userUuid: 'not-a-uuid' }))).toEqual(['userUuid']);
  });

  it('treats empty lists as absent', () => {
    expect(v2.parse({ types: [], state: [] })).toEqual({});
  });

  it('refuses codes, unknown states and unknown fields in v2', () => {
    expect(paths(v2.safeParse({ codes: ['1'] }))).toEqual(['codes']);
    expect(paths(v2.safeParse({ state: ['RS_OLD'] }))).toEqual(['state.0']);
    expect(paths(v2.safeParse({ cond: { condType: 'value', valeu: 'x' } }))).toEqual(['cond']);
  });

  it('accepts codes and RS_* states in v1', () => {
    const parsed = v1.parse({ codes: ['12', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 7], state: ['RS_APPROVED', 'ERS_NEW'], extra: true });
    expect(parsed).toEqual({
      codes: [{ entityId: 12 }, { entityUuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' }, { entityId: 7 }],
      state: ['ERS_APPROVED', 'ERS_NEW'],
    });
    expect(paths(v1.safeParse({ codes: ['nope'] }))).toEqual(['codes.0']);
  });

  it('names the bad field of a nested condition', () => {
    expect(paths(v2.safeParse({ cond: { condType: 'or', conds: [{ condType: 'value' }, { condType: 'bogus' }] } }))).toEqual([
      'cond.conds.1.condType',
    ]);
    // Both optional in the real QueryValueCondDef: a comparator without a value compares nothing.
    const typesOnly = v2.safeParse({ cond: { condType: 'value', itemTypes: ['NM_MAIN'], comparator: 'CT_EQ' } });
    expect(paths(typesOnly)).toBeUndefined();
    expect(typesOnly.data?.cond).toEqual({ condType: 'value', itemTypes: ['NM_MAIN'] });
    // Any string is a value in the real QueryParamsDef: one no entity number can equal matches nothing (compile.ts), it is not refused.
    expect(paths(v2.safeParse({ cond: { condType: 'index', name: 'entityId', comparator: 'CT_GT', value: 'abc' } }))).toBeUndefined();
    expect(paths(v2.safeParse({ cond: { condType: 'index', name: 'nope', comparator: 'CT_EQ', value: 'a' } }))).toEqual(['cond.name']);
    expect(paths(v2.safeParse({ cond: { condType: 'and', conds: [] } }))).toEqual(['cond.conds']);
    expect(paths(v2.safeParse({ text: '   ' }))).toEqual(['text']);
  });

  it('limits the depth and size of the condition tree before parsing it', () => {
    let deep: unknown = { condType: 'value' };
    for (let level = 0; level < MAX_CONDITION_DEPTH - 1; level += 1) deep = { condType: 'not', cond: deep };
    expect(v2.safeParse({ cond: deep }).success).toBe(true);
    const tooDeep = v2.safeParse({ cond: { condType: 'not', cond: deep } });
    expect(tooDeep.error?.issues[0]?.message).toMatch(/nest/);
    expect(paths(tooDeep)![0]).toBe(['cond', ...Array<string>(MAX_CONDITION_DEPTH).fill('cond')].join('.'));

    let veryDeep: unknown = { condType: 'value' };
    for (let level = 0; level < 100_000; level += 1) veryDeep = { condType: 'not', cond: veryDeep };
    expect(v2.safeParse({ cond: veryDeep }).success).toBe(false);

    const wide = { condType: 'or', conds: Array.from({ length: 51 }, () => ({ condType: 'value' })) };
    expect(v2.safeParse({ cond: wide }).error?.issues[0]?.message).toMatch(/at most/);
  });
});
