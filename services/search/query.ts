import { PART_TYPES, type EntityRef, type EntityState, type ParticipantRole } from '../../domain/model.ts';

// The validated search request (QueryParamsDef of DESIGN §6) as the compiler
// reads it. Text values are kept as sent; the compiler normalises them.

export const COMPARATORS = ['CT_EQ', 'CT_GT', 'CT_GTE', 'CT_LT', 'CT_LTE', 'CT_START_WITH', 'CT_END_WITH', 'CT_CONTAIN'] as const;
export type Comparator = (typeof COMPARATORS)[number];

/** Part types a `part` condition may name: the stored ones plus PT_PREF_NAME, the preferred PT_NAME part. */
export const SEARCH_PART_TYPES = [...PART_TYPES, 'PT_PREF_NAME'] as const;
export type SearchPartType = (typeof SEARCH_PART_TYPES)[number];

/**
 * Names an `index` condition may use:
 * - name: the display form of any PT_NAME part ('Novák, Jan (1850-1905)');
 * - prefName: the display form of the preferred name;
 * - description: the BRIEF_DESC item of a PT_BODY part (the brief description);
 * - entityId: the numeric id (numeric order for CT_EQ/GT/GTE/LT/LTE, its decimal text otherwise);
 * - entityUuid: the UUID in its lower-case text form.
 */
export const INDEX_NAMES = ['name', 'prefName', 'description', 'entityId', 'entityUuid'] as const;
export type IndexName = (typeof INDEX_NAMES)[number];

export const SEARCH_TYPES = ['DEFAULT', 'FULLTEXT'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export type Condition =
  | { condType: 'and'; conds: Condition[] }
  | { condType: 'or'; conds: Condition[] }
  | { condType: 'not'; cond: Condition }
  /** Without `value` it only asks for an item of those types/specs; with a value the comparator defaults to CT_EQ. */
  | { condType: 'value'; itemTypes?: string[]; itemSpecs?: string[]; value?: string; comparator?: Comparator }
  | { condType: 'part'; partType?: SearchPartType; onePart?: boolean; cond?: Condition }
  | { condType: 'index'; name: IndexName; comparator: Comparator; value: string };

export interface SearchQuery {
  /** Entity types; absent (or sent empty) means any. */
  types?: string[];
  state?: EntityState[];
  /** A participant's user id; with userRole, only participation in that role. */
  user?: string;
  userRole?: ParticipantRole;
  /** v1 only: restricts the search to these entities. */
  codes?: EntityRef[];
  cond?: Condition;
  /** The text of a FULLTEXT search, matched against every name. */
  text?: string;
}

export interface Paging {
  /** From 0. */
  page: number;
  pageSize: number;
}

/** Limits of one request: deeper or larger condition trees are refused before anything is compiled. */
export const MAX_CONDITION_DEPTH = 32;
export const MAX_CONDITION_NODES = 1000;
export const MAX_TEXT_LENGTH = 1000;
