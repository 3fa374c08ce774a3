import { queryParamsSchema } from '../../../services/search/index.ts';

// Query parameters and body limit as in v2; the body is v1's QueryParamsDef (with `codes`, RS_* states).
export const v1SearchBodySchema = queryParamsSchema({ version: 'v1' });
