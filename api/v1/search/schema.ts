import { queryParamsSchema } from '../../../services/search/index.ts';

// Query parameters and body limit as in v2; the body is v1's QueryParamsDef (with `codes`, RS_* states).
export { SEARCH_BODY_MAX_BYTES, searchQuerySchema } from '../../v2/search/schema.ts';

export const v1SearchBodySchema = queryParamsSchema({ version: 'v1' });
