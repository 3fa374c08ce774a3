import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Item, Part } from '../../domain/model.ts';
import { normalizeForSearch } from '../../domain/text.ts';
import { compileSearch } from '../../db/search/compile.ts';
import { needleWords } from '../../db/search/name-words.ts';
import type { SearchQuery } from '../../services/search/index.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

// `name CT_CONTAINS` with a needle that holds separators (`Novák, Jan`) is
// narrowed through the name words first (db/search/name-words.ts): every word
// of the needle must begin, end or be a word of a name of the entity, and the
// candidates' names are then compared with the whole needle. These tests hold
// the answers (entities, order, exact totals) to the plain definition, a
// substring of a normalised name, computed here in SQL over search_value.

const run = randomUUID().slice(0, 8);
const TYPE = `SN-${run}`;
const OTHER_TYPE = `SO-${run}`;
/** A word no other test file holds: needles with it can go without a type filter. */
const TOKEN = `q${run}`;

const str = (type: string, value: string): Item => ({ kind: 'string', type, value });
const namePart = (main: string, minor?: string, ...others: Array<[string, string]>): Part => ({
  partUuid: randomUUID(),
  type: 'PT_NAME',
  items: [
    str('NM_MAIN', main),
    ...(minor === undefined ? [] : [str('NM_MINOR', minor)]),
    ...others.map(([type, value]) => str(type, value)),
  ],
});

/** Names with separators of every kind, words split across names, one-letter words, diacritics and non-ASCII punctuation. */
const ENTITIES: Array<{ localId: string; names: Part[]; type?: string }> = [
  { localId: 'novak-jan', names: [namePart('Novák', 'Jan', ['NM_DEGREE_PRE', 'Ing.'], ['NM_SUP_GEN', '1850–1910, c1-42'])] },
  { localId: 'novak-jana', names: [namePart('Novák', 'Jana')] },
  { localId: 'novakova', names: [namePart('Nováková', 'Jana', ['NM_DEGREE_PRE', 'PhDr.'])] },
  { localId: 'janovak', names: [namePart('Janovák', 'Novák')] },
  // The words of the needle in two names of one entity: the narrowing lets it through, the whole needle does not.
  { localId: 'split', names: [namePart('Novák', 'Petr'), namePart('Svoboda', 'Jan')] },
  { localId: 'second-name', names: [namePart('Svoboda', 'Petr'), namePart('Novák', 'Jan', ['NM_SUP_GEN', 'c1-4'])] },
  { localId: 'obrien', names: [namePart("O'Brien-Smith", 'J. R.', ['NM_SUP_GEN', '100%_x\\y'])] },
  { localId: 'one-letter', names: [namePart('A', 'B. C.', ['NM_SUP_GEN', 'a-b, c'])] },
  { localId: 'dvorak', names: [namePart('Dvořák', 'Antonín', ['NM_SUP_GEN', '1841–1904'])] },
  { localId: 'nfd', names: [namePart('Jira\u0301sek', 'Alois')] },
  { localId: 'repeat', names: [namePart('Jan', 'Jan Jan', ['NM_SUP_GEN', 'jan-jan'])] },
  { localId: 'punct', names: [namePart('Černý (Schwarz)', 'Karel', ['NM_SUP_GEN', '„Černý“ · 1. 1. 1900'])] },
  { localId: 'spaces', names: [namePart('Van  der   Berg', 'Anna\u00a0Marie')] },
  { localId: 'token', names: [namePart(`${TOKEN}-Novák`, 'Jan'), namePart(`Novák ${TOKEN}`, 'Eva')] },
  { localId: 'token-other', names: [namePart(`X${TOKEN}, Jan`)] },
  { localId: 'other-type', type: OTHER_TYPE, names: [namePart('Novák', 'Jan')] },
];

/** Needles with separators: spanning words, leading and trailing separators, one-letter words, LIKE's own characters. */
const NEEDLES = [
  'Novák, Jan',
  'NOVAK, JAN',
  'novák, ja',
  'ák, j',
  'k, j',
  'k, jana',
  'novák, jana',
  'Novák, Jan (Ing.',
  'n (ing., 1850–1910, c1-4',
  '(ing., 1850–1910, c1-42)',
  '1850–1910, c',
  'c1-4',
  'c1-42',
  'c1-4)',
  '-4)',
  ', jan',
  ', jan,',
  'novák,',
  'jan, ',
  ', ',
  ',',
  '-',
  '(',
  ')',
  'a b',
  'a, b',
  'b. c',
  'b. c.',
  'c. (a-b, c)',
  'a-b',
  "o'brien",
  "o'brien-smith, j",
  'smith, j. r.',
  'j. r. (100%_x',
  '100%',
  '%_x',
  '_',
  '%',
  '\\',
  'x\\y',
  'Dvořák, Antonín',
  'dvorak, antonin (1841',
  'rak, ant',
  'jirásek, a',
  'jira\u0301sek, alois',
  'jan jan',
  'jan, jan jan',
  'jan-jan',
  'n (j',
  'černý (schwarz)',
  '(schwarz), k',
  '„černý“ · 1. 1',
  '1. 1.',
  'van der berg',
  'van  der',
  'berg, anna marie',
  'anna\u00a0marie',
  'svoboda, jan',
  'petr, novák',
  'novák, petr',
  'janovák, n',
  'ovák, novák',
];

describe('name CT_CONTAINS with separators', () => {
  let harness: Harness;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    harness = await startHarness();
    const { revisions } = await applyBatch(
      harness,
      batchXml(ENTITIES.map(({ localId, names, type }) => create(localId, '', { entityType: type ?? TYPE, parts: names }))),
    );
    for (const [localId, revision] of revisions) ids[localId] = revision.entityId;
  });

  afterAll(async () => {
    await harness?.close();
  });

  async function search(body: object, query = 'page=1&pageSize=50'): Promise<{ count: number; ids: number[] }> {
    const response = await harness.api(`/api/v2/search?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return {
      count: Number(/<count>(\d+)<\/count>/.exec(text)![1]),
      ids: [...text.matchAll(/<entityInfo [^>]*\bentityId="(\d+)"/g)].map((match) => Number(match[1])),
    };
  }

  /** The definition: entities of `types` with a (preferred) name whose normalised text contains the normalised needle. */
  async function definition(needle: string, options: { types?: string[]; preferred?: boolean } = {}): Promise<number[]> {
    const rows = await harness.sql<{ id: string }>(
      `select e.id from entity e
        where ($1::text[] is null or e.entity_type = any($1::text[]))
          and exists (select 1 from search_value sv where sv.entity_id = e.id and sv.kind = 'name' and (sv.preferred or not $3::boolean)
                                                       and position($2::text in sv.value_norm) > 0)
        order by e.id`,
      [options.types ?? null, normalizeForSearch(needle), options.preferred ?? false],
    );
    return rows.map((row) => Number(row.id));
  }

  const contains = (indexName: string, needle: string) => ({
    condType: 'index',
    name: indexName,
    comparator: 'CT_CONTAINS',
    value: needle,
  });

  it('splits a needle into words, each beginning, ending or being a word of the name', () => {
    expect(needleWords('novak, jan')).toEqual([
      { word: 'novak', match: 'suffix' },
      { word: 'jan', match: 'prefix' },
    ]);
    expect(needleWords('c1-42)')).toEqual([
      { word: 'c1', match: 'suffix' },
      { word: '42', match: 'whole' },
    ]);
    expect(needleWords(', jan (ing')).toEqual([
      { word: 'jan', match: 'whole' },
      { word: 'ing', match: 'prefix' },
    ]);
    expect(needleWords('1850–1910, c')).toEqual([
      { word: '1850–1910', match: 'suffix' },
      { word: 'c', match: 'prefix' },
    ]);
    expect(needleWords('novak')).toEqual([{ word: 'novak', match: 'inside' }]);
    expect(needleWords(', ')).toEqual([]);
    expect(needleWords('')).toEqual([]);
  });

  it('narrows the needles with words through name_word, and those without words not', () => {
    const sql = (needle: string) =>
      compileSearch({ types: [TYPE], cond: contains('name', needle) } as SearchQuery, { page: 1, pageSize: 10 }, 'EXACT').page.text;
    // The candidates' entity ids, from name_word (within the page's windows: one range of it per word, or the
    // window's own words, 0215).
    const narrowed = /sv\.entity_id = any\(array\(select (nw|x)\.entity_id from /;
    expect(sql('Novák, Jan')).toMatch(narrowed);
    expect(sql('Novák, Jan')).toContain('from name_word nw');
    expect(sql('c1-42)')).toMatch(narrowed);
    expect(sql(', ')).not.toContain('name_word');
    // Under not the narrowing would be a test per entity: it keeps the plain comparison.
    const neither = { types: [TYPE], cond: { condType: 'not', cond: contains('name', 'Novák, Jan') } } as SearchQuery;
    expect(compileSearch(neither, { page: 1, pageSize: 10 }, 'EXACT').page.text).not.toMatch(narrowed);
  });

  it('finds exactly the entities of the plain definition, with the exact total', async () => {
    const mismatches: string[] = [];
    for (const needle of NEEDLES) {
      const expected = await definition(needle, { types: [TYPE] });
      const found = await search({ types: [TYPE], cond: contains('name', needle) });
      if (JSON.stringify(found) !== JSON.stringify({ count: expected.length, ids: expected }))
        mismatches.push(`${needle}: ${JSON.stringify(found)} != ${JSON.stringify(expected)}`);
      const preferred = await definition(needle, { types: [TYPE], preferred: true });
      for (const cond of [contains('prefName', needle), { condType: 'part', partType: 'PT_PREF_NAME', cond: contains('name', needle) }]) {
        const foundPreferred = await search({ types: [TYPE], cond });
        if (JSON.stringify(foundPreferred) !== JSON.stringify({ count: preferred.length, ids: preferred }))
          mismatches.push(`preferred ${JSON.stringify(cond)}: ${JSON.stringify(foundPreferred)} != ${JSON.stringify(preferred)}`);
      }
    }
    expect(mismatches).toEqual([]);
    // The cases these needles are there for.
    const byName = async (needle: string) => (await search({ types: [TYPE], cond: contains('name', needle) })).ids.sort((a, b) => a - b);
    const of = (...localIds: string[]) => localIds.map((localId) => ids[localId]!).sort((a, b) => a - b);
    expect(await byName('Novák, Jan')).toEqual(of('novak-jan', 'novak-jana', 'second-name', 'token'));
    expect(await byName('svoboda, jan')).toEqual(of('split'));
    expect(await byName('novák, petr')).toEqual(of('split'));
    expect(await byName('c1-4)')).toEqual(of('second-name'));
    expect(await byName('100%')).toEqual(of('obrien'));
    expect(await byName('jira\u0301sek, alois')).toEqual(of('nfd'));
    expect(await byName('van der berg')).toEqual(of('spaces'));
    expect(await byName('„černý“ · 1. 1')).toEqual(of('punct'));
  });

  it('agrees in pages, beside other conditions, and without any other filter', async () => {
    const all = await definition('novák, jan', { types: [TYPE] });
    expect(all.length).toBeGreaterThan(3);
    const pages = [];
    for (let page = 1; page <= Math.ceil(all.length / 2); page += 1)
      pages.push(await search({ types: [TYPE], cond: contains('name', 'Novák, Jan') }, `page=${page}&pageSize=2`));
    expect(pages.map((page) => page.count)).toEqual(pages.map(() => all.length));
    expect(pages.flatMap((page) => page.ids)).toEqual(all);

    const jan = new Set(await definition('jan, ', { types: [TYPE] }));
    const both = all.filter((id) => jan.has(id));
    expect(
      await search({ types: [TYPE], cond: { condType: 'and', conds: [contains('name', 'Novák, Jan'), contains('name', 'jan, ')] } }),
    ).toEqual({ count: both.length, ids: both });
    const notJan = all.filter((id) => !jan.has(id));
    expect(
      await search({
        types: [TYPE],
        cond: { condType: 'and', conds: [contains('name', 'Novák, Jan'), { condType: 'not', cond: contains('name', 'jan, ') }] },
      }),
    ).toEqual({
      count: notJan.length,
      ids: notJan,
    });
    const either = [...new Set([...all, ...jan])].sort((a, b) => a - b);
    expect(
      await search({ types: [TYPE], cond: { condType: 'or', conds: [contains('name', 'Novák, Jan'), contains('name', 'jan, ')] } }),
    ).toEqual({ count: either.length, ids: either });

    // No type filter: the needle's own total, here only this file's entities (the token is theirs).
    for (const needle of [`${TOKEN}-novák, j`, `novák ${TOKEN}`, `${TOKEN}, jan`, `, ${TOKEN}`, `${TOKEN} `, `-${TOKEN}`]) {
      const expected = await definition(needle);
      expect(await search({ cond: contains('name', needle) }), needle).toEqual({ count: expected.length, ids: expected });
      expect(await search({ cond: contains('name', needle) }, 'page=1&pageSize=1'), needle).toEqual({
        count: expected.length,
        ids: expected.slice(0, 1),
      });
    }
    expect(await search({ cond: contains('name', `${TOKEN}, jan`) })).toEqual({ count: 1, ids: [ids['token-other']] });
  });
});
