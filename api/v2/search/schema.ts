import { z } from 'zod';
import { queryParamsSchema, SEARCH_TYPES } from '../../../services/search/index.ts';
import { pagingSchema } from '../../params.ts';

export const searchQuerySchema = pagingSchema.extend({
  searchType: z.enum(SEARCH_TYPES).default('DEFAULT'),
});

export const searchBodySchema = queryParamsSchema({ version: 'v2' });

/** A search body is a small JSON document; a condition tree of the maximum size fits easily. */
export const SEARCH_BODY_MAX_BYTES = 1024 * 1024;
