// The broad and odd searches a client can send that match much of the
// registry, or nothing the indexes can look up: each must be answered within
// a second or refused (400 SearchTooBroad) within 100 ms, at 1,000,000
// records. The refusals benchmark (bench/refusals.ts) times them; the abuse
// suite (test/abuse/refusals.test.ts) asserts each is answered or refused
// with a reason, never a 5xx. Each is written in both versions' spellings:
// v2's upper-case condTypes and CT_STARTS_WITH/CT_CONTAINS, v1's lower-case
// ones and CT_START_WITH/CT_CONTAIN.

import type { Comparator, Condition, SearchQuery, SearchType } from '../../domain/search-query.ts';

export type ApiVersion = 'v1' | 'v2';

export interface BroadSearch {
  name: string;
  body(version: ApiVersion): unknown;
}

const cond = (version: ApiVersion, type: string) => (version === 'v2' ? type.toUpperCase() : type);
const comparator = (version: ApiVersion, name: 'STARTS_WITH' | 'ENDS_WITH' | 'CONTAINS' | 'EQ' | 'GT') => {
  if (version === 'v2' || name === 'EQ' || name === 'GT') return `CT_${name}`;
  return { STARTS_WITH: 'CT_START_WITH', ENDS_WITH: 'CT_END_WITH', CONTAINS: 'CT_CONTAIN' }[name];
};
const nameIndex = (version: ApiVersion, how: Parameters<typeof comparator>[1], value: string) => ({
  condType: cond(version, 'index'),
  name: 'DISPLAY_NAME',
  comparator: comparator(version, how),
  value,
});

/** Twenty two-letter beginnings of names, the "OR of 20 prefixes". */
const PREFIXES = ['No', 'Sv', 'Dv', 'Če', 'Pr', 'Ku', 'Ve', 'Ho', 'Ně', 'Po', 'Ja', 'Pe', 'Ma', 'To', 'Ev', 'Ka', 'Lu', 'Vá', 'Ha', 'Be'];
/** A sender of a tenth of the benchmark's records (bench/lib/load.ts benchSender). */
const BENCH_SENDER_UUID = '00000000-0000-4000-8000-000000000003';

export const BROAD_SEARCHES: readonly BroadSearch[] = [
  { name: 'nothing (an empty query)', body: () => ({}) },
  { name: 'bare part PT_NAME', body: (v) => ({ cond: { condType: cond(v, 'part'), partType: 'PT_NAME' } }) },
  { name: 'bare part PT_BODY', body: (v) => ({ cond: { condType: cond(v, 'part'), partType: 'PT_BODY' } }) },
  { name: 'value without a value (NM_MAIN)', body: (v) => ({ cond: { condType: cond(v, 'value'), itemTypes: ['NM_MAIN'] } }) },
  {
    name: 'part PT_BODY, value without a value (GENDER)',
    body: (v) => ({
      cond: { condType: cond(v, 'part'), partType: 'PT_BODY', cond: { condType: cond(v, 'value'), itemTypes: ['GENDER'] } },
    }),
  },
  {
    name: 'order comparator on a common item (GENDER > "A")',
    body: (v) => ({ cond: { condType: cond(v, 'value'), itemTypes: ['GENDER'], comparator: 'CT_GT', value: 'A' } }),
  },
  { name: 'one-letter contains', body: (v) => ({ cond: nameIndex(v, 'CONTAINS', 'a') }) },
  { name: 'two-letter ends with', body: (v) => ({ cond: nameIndex(v, 'ENDS_WITH', 'ák') }) },
  { name: 'one-letter prefix', body: (v) => ({ cond: nameIndex(v, 'STARTS_WITH', 'N') }) },
  {
    name: 'OR of 20 prefixes',
    body: (v) => ({ cond: { condType: cond(v, 'or'), conds: PREFIXES.map((prefix) => nameIndex(v, 'STARTS_WITH', prefix)) } }),
  },
  { name: 'NOT of a name', body: (v) => ({ cond: { condType: cond(v, 'not'), cond: nameIndex(v, 'EQ', 'Novák') } }) },
  { name: 'state only', body: () => ({ state: ['ERS_NEW'] }) },
  { name: 'every state', body: () => ({ state: ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED'] }) },
  { name: 'user filter: a sender', body: () => ({ userRoles: 'SENDER', userUuid: BENCH_SENDER_UUID }) },
  { name: 'user filter: a role alone (EDITOR)', body: () => ({ userRoles: 'EDITOR' }) },
  { name: 'user filter: one letter of a name', body: () => ({ user: 'a' }) },
  { name: 'state and one-letter contains', body: (v) => ({ state: ['ERS_NEW'], cond: nameIndex(v, 'CONTAINS', 'e') }) },
];

/** How a search was answered: 200, or a refusal (4xx or 503) with the reason the problem gives. */
export interface SearchOutcome {
  status: number;
  /** properties.reason of a problem (SearchTooBroad, SearchTimeout), else its code; undefined for a 200. */
  reason?: string;
  ms: number;
}

/** Sends one search (page 1 of 20, as the real client's first page) and reads its whole answer. */
export async function sendSearch(
  apiUrl: string,
  version: ApiVersion,
  search: BroadSearch,
  headers: Record<string, string>,
): Promise<SearchOutcome> {
  const started = performance.now();
  const response = await fetch(`${apiUrl}/api/${version}/search?page=1&pageSize=20`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(search.body(version)),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status === 200) return { status: 200, ms };
  let reason: string | undefined;
  try {
    const problem = JSON.parse(text) as { code?: string; properties?: { reason?: string } };
    reason = problem.properties?.reason ?? problem.code;
  } catch {
    reason = undefined;
  }
  return { status: response.status, ms, ...(reason === undefined ? {} : { reason }) };
}

/**
 * The name searches the real client builds, in the service's canonical form
 * (domain/search-query.ts), on the generator's names (bench/lib/generate.ts:
 * 1 in 30 a Novák, 1 in 25 a Jan): each must be answered with its exact
 * total. bench/search-scale.ts times their page and total.
 */
export interface NameSearch {
  name: string;
  query: SearchQuery;
  searchType: SearchType;
}

const displayName = (comparator: Comparator, value: string): Condition => ({ condType: 'index', name: 'DISPLAY_NAME', comparator, value });
const preferredPart = (cond: Condition): Condition => ({ condType: 'part', partType: 'PT_PREF_NAME', cond });

export const NAME_SEARCHES: readonly NameSearch[] = [
  {
    name: 'PERSON, preferred name contains "novák"',
    query: { types: ['PERSON'], cond: preferredPart(displayName('CT_CONTAINS', 'novák')) },
    searchType: 'EXACT',
  },
  { name: 'preferred name contains "jan"', query: { cond: preferredPart(displayName('CT_CONTAINS', 'jan')) }, searchType: 'EXACT' },
  {
    name: 'contains "jan", with types',
    query: { types: ['PERSON', 'FAMILY'], cond: displayName('CT_CONTAINS', 'jan') },
    searchType: 'EXACT',
  },
  { name: 'starts with "nov"', query: { cond: displayName('CT_STARTS_WITH', 'nov') }, searchType: 'EXACT' },
  { name: 'starts with "novák"', query: { cond: displayName('CT_STARTS_WITH', 'novák') }, searchType: 'EXACT' },
  {
    name: 'name ends with "-1)"',
    query: { cond: { condType: 'index', name: 'name', comparator: 'CT_ENDS_WITH', value: '-1)' } },
    searchType: 'EXACT',
  },
  { name: 'contains "novák, jan"', query: { cond: displayName('CT_CONTAINS', 'novák, jan') }, searchType: 'EXACT' },
  {
    name: 'SHORT_NAME equals "Novák"',
    query: { cond: { condType: 'index', name: 'SHORT_NAME', comparator: 'CT_EQ', value: 'Novák' } },
    searchType: 'EXACT',
  },
  {
    name: 'VALUE NM_MINOR equals "Jan", state',
    query: { state: ['ERS_NEW'], cond: { condType: 'value', itemTypes: ['NM_MINOR'], comparator: 'CT_EQ', value: 'Jan' } },
    searchType: 'EXACT',
  },
  {
    name: 'OR of two surnames',
    query: { cond: { condType: 'or', conds: [displayName('CT_STARTS_WITH', 'novák'), displayName('CT_STARTS_WITH', 'svoboda')] } },
    searchType: 'EXACT',
  },
  {
    name: '"novák" and not "jan"',
    query: {
      cond: { condType: 'and', conds: [displayName('CT_CONTAINS', 'novák'), { condType: 'not', cond: displayName('CT_CONTAINS', 'jan') }] },
    },
    searchType: 'EXACT',
  },
  { name: 'FULLTEXT "jan novák"', query: { text: 'jan novák' }, searchType: 'FULLTEXT' },
  // A full name as it is being typed: its last word is not yet whole.
  { name: 'FULLTEXT "jan nov"', query: { text: 'jan nov' }, searchType: 'FULLTEXT' },
  { name: 'FULLTEXT "novák j"', query: { text: 'novák j' }, searchType: 'FULLTEXT' },
  // A word cut short before the last: no name holds `nov` whole, so every match is ranked (docs/performance.md, Known limits).
  { name: 'FULLTEXT "nov jan"', query: { text: 'nov jan' }, searchType: 'FULLTEXT' },
  // One word being typed: the words it begins are walked together.
  { name: 'FULLTEXT "nov"', query: { text: 'nov' }, searchType: 'FULLTEXT' },
  { name: 'FULLTEXT "novák", PERSON', query: { types: ['PERSON'], text: 'novák' }, searchType: 'FULLTEXT' },
];
