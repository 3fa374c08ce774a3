import { describe, expect, it } from 'vitest';
import { compileSearch, escapeLike } from '../../db/search/compile.ts';

describe('compileSearch', () => {
  it('passes every user value as a parameter', () => {
    const hostile = "x'; drop table entity; --";
    const compiled = compileSearch(
      {
        types: [hostile],
        user: hostile,
        cond: {
          condType: 'or',
          conds: [
            { condType: 'value', itemTypes: [hostile], value: hostile, comparator: 'CT_CONTAINS' },
            {
              condType: 'part',
              partType: 'PT_PREF_NAME',
              onePart: true,
              cond: { condType: 'index', name: 'name', comparator: 'CT_EQ', value: hostile },
            },
          ],
        },
      },
      { page: 3, pageSize: 10 },
      'EXACT',
    );
    expect(compiled.page.text).not.toContain('drop table');
    expect(compiled.count.text).not.toContain('drop table');
    expect(compiled.page.values).toContain(hostile);
    expect(compiled.page.values.slice(-2)).toEqual([20, 10]);
    expect(compiled.count.values).toEqual(compiled.page.values.slice(0, -2));
    expect(compiled.matchers).toHaveLength(2);
  });

  it('escapes LIKE wildcards and normalises the value', () => {
    expect(escapeLike('50%_a\\b')).toBe('50\\%\\_a\\\\b');
    const compiled = compileSearch(
      { cond: { condType: 'value', value: ' Nová_K% ', comparator: 'CT_STARTS_WITH' } },
      { page: 1, pageSize: 1 },
      'EXACT',
    );
    expect(compiled.page.values).toContain('nova\\_k\\%%');
  });

  it('keeps negated conditions out of the lookups', () => {
    const compiled = compileSearch(
      {
        cond: {
          condType: 'and',
          conds: [
            { condType: 'not', cond: { condType: 'value', value: 'a' } },
            { condType: 'not', cond: { condType: 'not', cond: { condType: 'value', value: 'b' } } },
          ],
        },
      },
      { page: 1, pageSize: 1 },
      'EXACT',
    );
    expect(compiled.matchers.map((matcher) => matcher.test.needle)).toEqual(['b']);
  });

  it('counts pages from 1: page 1 starts at offset 0', () => {
    expect(compileSearch({}, { page: 1, pageSize: 25 }, 'EXACT').page.values.slice(-2)).toEqual([0, 25]);
    expect(compileSearch({}, { page: 4, pageSize: 25 }, 'EXACT').page.values.slice(-2)).toEqual([75, 25]);
  });

  it('passes user names and UUIDs as parameters (search_user_role keys), never as SQL', () => {
    const hostile = "x'; drop table entity; --";
    const compiled = compileSearch(
      { userName: hostile, userUuid: '0e3c5a5e-1111-4222-8333-944455556666', userRole: 'EDITOR' },
      { page: 1, pageSize: 1 },
      'EXACT',
    );
    expect(compiled.page.text).not.toContain('drop table');
    expect(compiled.page.values).toEqual(
      expect.arrayContaining(['uuid:0e3c5a5e-1111-4222-8333-944455556666', `name:${hostile}`, 'EDITOR']),
    );
  });

  it('drives a user filter from the user’s entries, and pages and counts a sole user filter from them alone', () => {
    const compiled = compileSearch(
      { userUuid: '0e3c5a5e-1111-4222-8333-944455556666', userRole: 'SENDER' },
      { page: 2, pageSize: 20 },
      'EXACT',
    );
    // A user alone: the page is read from the user's entries (in entity order in the key), then its records.
    expect(compiled.page.text).toContain(
      'from (select ur.entity_id from search_user_role ur where ur.user_key = $1::text and ur.role = $2::text order by ur.entity_id offset $3::bigint limit $4::bigint) u',
    );
    expect(compiled.page.values).toEqual(['uuid:0e3c5a5e-1111-4222-8333-944455556666', 'SENDER', 20, 20]);
    expect(
      compileSearch(
        { userUuid: '0e3c5a5e-1111-4222-8333-944455556666', userRole: 'SENDER', state: ['ERS_NEW'] },
        { page: 1, pageSize: 20 },
        'EXACT',
      ).page.text,
    ).toContain('e.id = any(array(select ur.entity_id from search_user_role ur where ur.user_key = $3::text and ur.role = $2::text))');
    expect(compiled.count).toEqual({
      text: 'select count(*) as total from search_user_role ur where ur.user_key = $1::text and ur.role = $2::text',
      values: ['uuid:0e3c5a5e-1111-4222-8333-944455556666', 'SENDER'],
    });
    // With another filter, or without a role (a user may hold several roles in one record), the general count.
    expect(
      compileSearch({ userName: 'Eva', userRole: 'SENDER', types: ['PERSON'] }, { page: 1, pageSize: 20 }, 'EXACT').count.text,
    ).toContain('from entity e');
    expect(compileSearch({ userName: 'Eva' }, { page: 1, pageSize: 20 }, 'EXACT').count.text).toContain('from entity e');
  });

  it('totals a search by types and states alone from entity_count, and any other search by counting entities', () => {
    const paging = { page: 2, pageSize: 20 };
    expect(compileSearch({ types: ['PERSON', 'FAMILY'], state: ['ERS_NEW'] }, paging, 'EXACT').count).toEqual({
      text: 'select coalesce(sum(c.entities), 0) as total from entity_count c where c.entity_type = any($1::text[]) and c.state = any($2::text[])',
      values: [['PERSON', 'FAMILY'], ['ERS_NEW']],
    });
    expect(compileSearch({ state: ['ERS_APPROVED'] }, paging, 'EXACT').count).toEqual({
      text: 'select coalesce(sum(c.entities), 0) as total from entity_count c where c.state = any($1::text[])',
      values: [['ERS_APPROVED']],
    });
    expect(compileSearch({}, paging, 'EXACT').count).toEqual({
      text: 'select coalesce(sum(c.entities), 0) as total from entity_count c',
      values: [],
    });
    expect(compileSearch({ types: ['PERSON'] }, paging, 'EXACT').countFollowsMatches).toBe(true);
    // Anything else beside them, or a FULLTEXT search, counts the entities.
    expect(compileSearch({ types: ['PERSON'], codes: [{ entityId: 1 }] }, paging, 'EXACT').count.text).toContain('from entity e');
    expect(compileSearch({ types: ['PERSON'], user: 'eva' }, paging, 'EXACT').count.text).toContain('from entity e');
    expect(compileSearch({ types: ['PERSON'], cond: { condType: 'value', value: 'a' } }, paging, 'EXACT').count.text).toContain(
      'from entity e',
    );
    expect(compileSearch({ types: ['PERSON'], text: 'Novák' }, paging, 'FULLTEXT').count.text).toContain('join entity e');
  });

  it('marks the totals whose cost follows their matches (a name through its words, a user alone), which no cost estimate refuses', () => {
    const paging = { page: 1, pageSize: 20 };
    const name = { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: 'Novák' } as const;
    expect(compileSearch({ cond: name }, paging, 'EXACT').countFollowsMatches).toBe(true);
    expect(compileSearch({ cond: name, types: ['PERSON'], state: ['ERS_NEW'] }, paging, 'EXACT').countFollowsMatches).toBe(true);
    expect(
      compileSearch({ userUuid: '0e3c5a5e-1111-4222-8333-944455556666', userRole: 'SENDER' }, paging, 'EXACT').countFollowsMatches,
    ).toBe(true);
    // A needle with separators is narrowed through its words to candidates, counted on the page itself.
    const separated = compileSearch({ cond: { ...name, value: 'Novák, Jan' } }, paging, 'EXACT');
    expect({
      follows: separated.countFollowsMatches,
      carried: separated.pageCarriesTotal,
      plain: separated.plain?.page.text.includes('like'),
    }).toEqual({ follows: false, carried: true, plain: true });
    expect(separated.page.text).toContain('count(*) over () as total');
    expect(compileSearch({ cond: name }, paging, 'EXACT').pageCarriesTotal).toBe(false);
    // Under `or`, the plain comparison alone.
    expect(
      compileSearch({ cond: { condType: 'or', conds: [{ ...name, value: 'Novák, Jan' }, name] } }, paging, 'EXACT').plain,
    ).toBeUndefined();
    expect(compileSearch({ cond: { condType: 'part', partType: 'PT_NAME' } }, paging, 'EXACT').countFollowsMatches).toBe(false);
    expect(compileSearch({ types: ['PERSON'], codes: [{ entityId: 1 }] }, paging, 'EXACT').countFollowsMatches).toBe(false);
    expect(compileSearch({ cond: name, userName: 'Eva' }, paging, 'EXACT').countFollowsMatches).toBe(false);
  });
});
