import type { Comparator } from '../../domain/search-query.ts';

// What a search request may hold beyond the canonical query
// (domain/search-query.ts): the older spellings the wire accepts, and the size
// limits checked before anything is compiled.

/** The v1 spellings of three comparators, accepted on v2 too. */
export const V1_COMPARATORS: Readonly<Record<string, Comparator>> = {
  CT_START_WITH: 'CT_STARTS_WITH',
  CT_END_WITH: 'CT_ENDS_WITH',
  CT_CONTAIN: 'CT_CONTAINS',
};

/**
 * Limits of one request: deeper or larger condition trees are refused before anything is compiled.
 * One AND/OR list holds at most MAX_CONDITION_LIST conditions (the documents' maxItems); the whole tree
 * MAX_CONDITION_NODES, which a list at its documented maximum with its parents stays well within. Every
 * text condition is a subquery: a list of 1,000 took PostgreSQL 20-60 s, one of 50 takes a second or two.
 */
export const MAX_CONDITION_DEPTH = 32;
export const MAX_CONDITION_LIST = 50;
export const MAX_CONDITION_NODES = 1000;
export const MAX_TEXT_LENGTH = 1000;
