// Entity search shared by the v2 and v1 APIs: validate the body with
// queryParamsSchema({ version }), then run searchEntities over db.search.
// The query model and its compiler to SQL are db/search's.
export { SEARCH_TYPES, type SearchQuery, type SearchType } from '../../domain/search-query.ts';
export { MAX_CONDITION_DEPTH } from './query.ts';
export { queryParamsSchema } from './schema.ts';
export { searchEntities } from './search.ts';
export { entityTypesInUse, searchByName } from './by-name.ts';
export type { SearchLimits } from './search.ts';
