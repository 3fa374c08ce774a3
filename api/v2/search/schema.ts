import { z } from 'zod';
import { queryParamsSchema, SEARCH_TYPES, type SearchType } from '../../../services/search/index.ts';
import { pagingSchema } from '../../params.ts';

/** DEFAULT is the project's earlier name of EXACT. */
export const searchQuerySchema = pagingSchema.extend({
  searchType: z
    .enum([...SEARCH_TYPES, 'DEFAULT'])
    .default('EXACT')
    .transform((name): SearchType => (name === 'DEFAULT' ? 'EXACT' : name)),
});

export const searchBodySchema = queryParamsSchema({ version: 'v2' });

/** A search body is a small JSON document; a condition tree of the maximum size fits easily. */
export const SEARCH_BODY_MAX_BYTES = 1024 * 1024;
