import { describe, expect, it } from 'vitest';
import { compileSearch, escapeLike } from '../../db/search/compile.ts';
import type { SearchQuery } from '../../domain/search-query.ts';

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
    // The count's last value is its cap (none here).
    expect(compiled.count.values).toEqual([...compiled.page.values.slice(0, -2), null]);
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
    expect(compileSearch({ types: ['PERSON'] }, paging, 'EXACT', 100).countCapped).toBe(false);
    // Anything else beside them, or a FULLTEXT search, counts the entities.
    expect(compileSearch({ types: ['PERSON'], codes: [{ entityId: 1 }] }, paging, 'EXACT').count.text).toContain('from entity e');
    expect(compileSearch({ types: ['PERSON'], user: 'eva' }, paging, 'EXACT').count.text).toContain('from entity e');
    expect(compileSearch({ types: ['PERSON'], cond: { condType: 'value', value: 'a' } }, paging, 'EXACT').count.text).toContain(
      'from entity e',
    );
    // A FULLTEXT text's words are read from name_word of the types: its total counts them alone.
    const fulltext = compileSearch({ types: ['PERSON'], text: 'Novák' }, paging, 'FULLTEXT', 0, new Set(['novak']));
    expect(fulltext.count.text).not.toContain('from entity e');
    expect(fulltext.count.text).toContain('nw.entity_type = any($1::text[])');
  });

  it('reads a text condition the query must meet as a capped set of entity ids, and counts the rest up to the cap', () => {
    const paging = { page: 1, pageSize: 20 };
    const name = { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: 'Novák' } as const;
    const sole = compileSearch({ cond: name }, paging, 'EXACT', 1000);
    expect(sole.count.text).toContain('search_capped(');
    expect(sole.count.text).toContain('count(distinct m.entity_id)');
    // The page of name words is read in windows of ids, each a range of name_word's key, uncapped (the window bounds it).
    expect(sole.page.text).toContain('with recursive w(lo, hi, scanned, ids)');
    expect(sole.page.text).toContain('nw.word = v.word and nw.entity_id >= w.lo and nw.entity_id < w.hi');
    expect(sole.page.text).toContain('search_reads_capped(found.scanned, $');
    expect(sole.page.text).not.toContain('search_capped(');
    expect(sole.countCapped).toBe(false);
    // Types are read beside each name word (name_word's key holds them): the total still counts the set alone.
    const typed = compileSearch({ cond: name, types: ['PERSON'] }, paging, 'EXACT', 1000);
    expect(typed.count.text).toContain('count(distinct m.entity_id)');
    expect(typed.count.text).toContain('nw.entity_type = any($1::text[])');
    expect(typed.count.text).not.toContain('from entity e');
    // Beside a state, which no index of the words holds, the entities are counted, at most the cap + 1.
    const withState = compileSearch({ cond: name, state: ['ERS_NEW'] }, paging, 'EXACT', 1000);
    expect({ capped: withState.countCapped, limit: withState.count.values.at(-1) }).toEqual({ capped: true, limit: 1001 });
    // Each comparator of a name by its own index for the total: a prefix, a reversed prefix, a range.
    const compiled = (comparator: string, more: Partial<SearchQuery> = {}) =>
      compileSearch({ cond: { ...name, comparator } as never, ...more }, paging, 'EXACT', 1000);
    const by = (comparator: string) => compiled(comparator).page.text;
    expect(compiled('CT_STARTS_WITH').count.text).toContain('sv.value_norm ~>=~');
    expect(compiled('CT_ENDS_WITH').count.text).toContain('reverse(sv.value_norm) ~>=~');
    expect(by('CT_EQ')).toContain('sv.value_norm ~<=~');
    // A whole name's range holds many names, none in id order: a page of one (or of `or` of several) reads each
    // range's first ids up to the page's end, sorted by an expression that no index keyed by entity id gives.
    expect(by('CT_EQ')).toContain('order by s.entity_id + 0 limit ($');
    expect(by('CT_EQ')).not.toContain('with recursive');
    // A prefix's and an ending's page is read in windows of ids, from the entities holding the needle's narrowing word
    // (name_word), whose names are then tested for the prefix or the ending; beside a state too.
    for (const [comparator, test] of [
      ['CT_STARTS_WITH', /left\(sv\.value_norm, \$\d+::integer\) = \$/],
      ['CT_ENDS_WITH', /right\(sv\.value_norm, \$\d+::integer\) = \$/],
    ] as const) {
      for (const page of [by(comparator), compiled(comparator, { state: ['ERS_NEW'] }).page.text]) {
        expect(page).toContain('with recursive');
        expect(page).toContain('nw.word = v.word and nw.entity_id >= w.lo and nw.entity_id < w.hi');
        expect(page).toMatch(test);
        expect(page).not.toContain('sv.value_norm) ~>=~');
        expect(page).not.toContain('sv.value_norm ~>=~');
      }
    }
    // An ending's last word ends a name's last word: `novák` narrows to the vocabulary's words ending so, `ák, Jan` to
    // the word `jan` itself (a separator comes before it).
    expect(compiled('CT_ENDS_WITH').page.values).toContain('%novak');
    const afterSeparator = compileSearch({ cond: { ...name, comparator: 'CT_ENDS_WITH', value: 'ák, Jan' } }, paging, 'EXACT', 1000);
    expect(afterSeparator.page.values).toContain('jan');
    expect(afterSeparator.page.values).not.toContain('%jan');
    // Beside a filter a whole name's page cannot read its sets for their first ids alone: it reads the capped set whole.
    expect(compiled('CT_EQ', { state: ['ERS_NEW'] }).page.text).toContain('from unnest(array(');
    // One value of an item type is read in windows; beside a set that is not, the page reads every set whole.
    const value = { condType: 'value' as const, itemTypes: ['NM_MINOR'], comparator: 'CT_EQ' as const, value: 'Jan' };
    expect(compileSearch({ cond: value, state: ['ERS_NEW'] }, paging, 'EXACT', 1000).page.text).toContain(
      'sv.entity_id >= w.lo and sv.entity_id < w.hi',
    );
    const mixed = compileSearch({ cond: { condType: 'and', conds: [value, { ...name, comparator: 'CT_EQ' }] } }, paging, 'EXACT', 1000);
    expect(mixed.page.text).not.toContain('with recursive');
    expect(mixed.page.text).toContain('search_capped(');
    // Under `not`, per entity.
    expect(compileSearch({ cond: { condType: 'not', cond: name } }, paging, 'EXACT', 1000).page.text).not.toContain('search_capped(');
  });

  it("reads a window of a short needle's many vocabulary words from the window's own words", () => {
    const paging = { page: 1, pageSize: 10 };
    const contains = (value: string, more: Partial<SearchQuery> = {}) =>
      compileSearch({ cond: { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value }, ...more }, paging, 'EXACT', 1000)
        .page.text;
    // Each window reads a range of name_word's key per vocabulary word, or, when those words outnumber the window's
    // width over 64 ids, the window's own entries, each word tested: the same comparison gates both, negated in one.
    const page = contains('jan');
    const gate = /cardinality\(l\.words\) \* (\d+) > w\.hi - w\.lo/g;
    expect([...page.matchAll(gate)].map((match) => match[1])).toEqual(['64', '64']);
    expect(page).toMatch(/ where not \(cardinality/);
    expect(page).toMatch(/where nw\.entity_id >= w\.lo and nw\.entity_id < w\.hi and strpos\(nw\.word, \$\d+::text\) > 0 and cardinality/);
    // The words are looked up once for both. Beside types, the matching entries' entities are probed for them.
    expect(page).toContain('from (select array(select v.word from name_vocabulary v where v.word like $');
    expect(page.match(/from name_vocabulary/g)).toHaveLength(1);
    const typed = contains('jan', { types: ['PERSON'] });
    expect([...typed.matchAll(gate)].map((match) => match[1])).toEqual(['64', '64']);
    expect(typed).toMatch(
      /strpos\(nw\.word, \$\d+::text\) > 0 and exists \(select from entity t where t\.id = nw\.entity_id and t\.entity_type = any\(\$1::text\[\]\) offset 0\)/,
    );
    // A prefix's narrowing word is tested by its beginning; a whole word is one range of the key, whatever the window.
    const prefix = compileSearch(
      { cond: { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_STARTS_WITH', value: 'nov' } },
      paging,
      'EXACT',
      1000,
    ).page.text;
    expect(prefix).toMatch(/left\(nw\.word, \$\d+::integer\) = \$\d+::text/);
    expect(contains('novák, jan,')).not.toContain('> w.hi - w.lo');
  });
});
