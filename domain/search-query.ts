import { PART_TYPES, type EntityRef, type EntityState, type ParticipantRole } from './model.ts';

// The validated search request (QueryParamsDef) as the compiler reads it:
// what db/'s SearchRepository can be asked. The wire accepts several spellings of
// some names (services/search/schema.ts); here each has one canonical form.
// Text values are kept as sent; the compiler normalises them.

/** Comparators in the names of the v2 OpenAPI (QueryComparator). */
export const COMPARATORS = ['CT_EQ', 'CT_GT', 'CT_GTE', 'CT_LT', 'CT_LTE', 'CT_STARTS_WITH', 'CT_ENDS_WITH', 'CT_CONTAINS'] as const;
export type Comparator = (typeof COMPARATORS)[number];

/** Condition types; the wire accepts them in upper case (v2) and lower case (v1). */
export type ConditionType = 'and' | 'or' | 'not' | 'part' | 'index' | 'value';

/** Part types a `part` condition may name: the stored ones plus PT_PREF_NAME, the preferred PT_NAME part. */
export const SEARCH_PART_TYPES = [...PART_TYPES, 'PT_PREF_NAME'] as const;
export type SearchPartType = (typeof SEARCH_PART_TYPES)[number];

/**
 * Names an `index` condition may use:
 * - DISPLAY_NAME: the display form of any PT_NAME part ('Novák, Jan (1850-1905)'),
 *   within `part` PT_PREF_NAME that of the preferred name; `name` is the project's older name for it;
 * - SHORT_NAME: the main part of a name (its NM_MAIN item, 'Novák');
 * - prefName: the display form of the preferred name;
 * - description: the BRIEF_DESC item of a PT_BODY part (the brief description);
 * - entityId: the numeric id (numeric order for CT_EQ/GT/GTE/LT/LTE, its decimal text otherwise);
 * - entityUuid: the UUID in its lower-case text form.
 */
export const INDEX_NAMES = ['DISPLAY_NAME', 'SHORT_NAME', 'name', 'prefName', 'description', 'entityId', 'entityUuid'] as const;
type IndexName = (typeof INDEX_NAMES)[number];

/** EXACT: every match, by entityId; FULLTEXT: similar names, best first. */
export const SEARCH_TYPES = ['EXACT', 'FULLTEXT'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** Roles of the `userRoles` filter: the participant roles, and SENDER, who sent the record's current content. */
export const SEARCH_USER_ROLES = ['EDITOR', 'APPROVER', 'SENDER'] as const;
type SearchUserRole = ParticipantRole | 'SENDER';

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
  /**
   * v1's `user` (and the project's own on v2). Alone: a user who sent a
   * revision of the record (revision.user_name) or takes part in it (a
   * participant's id). With userRole: a participant's id in that role, or the
   * sender of the current content (SENDER).
   */
  user?: string;
  /** A user's CAM UUID and full name: a participant, or the sender with role SENDER. */
  userUuid?: string;
  userName?: string;
  /** Only this role: participation as EDITOR/APPROVER, or SENDER of the current content. */
  userRole?: SearchUserRole;
  /** v1 only: restricts the search to these entities. */
  codes?: EntityRef[];
  cond?: Condition;
  /** The text of a FULLTEXT search, matched against every name. */
  text?: string;
}

export interface Paging {
  /** From 1, as on the wire. */
  page: number;
  pageSize: number;
}

/** The text forms of an entity number (one that fits bigint) and a UUID: a value of neither form names no entity. */
export const ENTITY_ID_PATTERN = /^[1-9][0-9]{0,15}$/;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
