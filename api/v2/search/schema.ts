import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { z } from 'zod';
import { queryParamsSchema, SEARCH_TYPES } from '../../../services/search/index.ts';
import { pagingSchema } from '../../params.ts';
import { problem } from '../../problems.ts';

export const searchQuerySchema = pagingSchema.extend({
  searchType: z.enum(SEARCH_TYPES).default('DEFAULT'),
});

export const searchBodySchema = queryParamsSchema({ version: 'v2' });

/** A search body is a small JSON document; a condition tree of the maximum size fits easily. */
export const SEARCH_BODY_MAX_BYTES = 1024 * 1024;

const JSON_TYPES = ['application/json', '+json'];

/** Reads and parses a JSON request body within `limit` bytes: 415 for another media type, 400 for malformed JSON. */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const type = ctx.request.is(JSON_TYPES);
  if (type === null) throw problem(400, 'BadRequest', 'a JSON body is required');
  if (type === false) {
    throw problem(415, 'UnsupportedMediaType', `expected application/json, got ${ctx.get('content-type') || 'no content type'}`);
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) {
    throw problem(413, 'PayloadTooLarge', `body of ${declared} bytes exceeds the limit of ${limit} bytes`);
  }
  const text = await getRawBody(ctx.req, { length: declared, limit, encoding: 'utf-8' });
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw problem(400, 'BadRequest', `malformed JSON: ${(error as Error).message}`);
  }
}
