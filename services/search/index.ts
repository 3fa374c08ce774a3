// Entity search shared by the v2 and v1 APIs: validate the body with
// queryParamsSchema({ version }), then run searchEntities.
export { compileSearch, escapeLike } from './compile.ts';
export { comparatorHighlights, normalizeWithPositions, wordHighlights } from './highlights.ts';
export {
  COMPARATORS,
  INDEX_NAMES,
  MAX_CONDITION_DEPTH,
  MAX_CONDITION_NODES,
  SEARCH_PART_TYPES,
  SEARCH_TYPES,
  SEARCH_USER_ROLES,
  V1_COMPARATORS,
  CONDITION_TYPES,
  type Comparator,
  type Condition,
  type IndexName,
  type Paging,
  type SearchPartType,
  type SearchQuery,
  type SearchType,
  type SearchUserRole,
  type ConditionType,
} from './query.ts';
export { queryParamsSchema, type QueryParamsSchemaOptions } from './schema.ts';
export { searchEntities } from './search.ts';
