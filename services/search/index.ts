// Entity search shared by the v2 and v1 APIs: validate the body with
// queryParamsSchema({ version }), then run searchEntities over db.search.
// The query model and its compiler to SQL are db/search's.
export { comparatorHighlights, normalizeWithPositions, wordHighlights } from './highlights.ts';
export {
  COMPARATORS,
  INDEX_NAMES,
  SEARCH_PART_TYPES,
  SEARCH_TYPES,
  SEARCH_USER_ROLES,
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
} from '../../domain/search-query.ts';
export { MAX_CONDITION_DEPTH, MAX_CONDITION_NODES, V1_COMPARATORS } from './query.ts';
export { queryParamsSchema, type QueryParamsSchemaOptions } from './schema.ts';
export { searchEntities, type SearchAnswer } from './search.ts';
