import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { problem } from '../../problems.ts';

/** Reads a JSON request body within `limit` bytes; the wrong media type is 415, bad JSON 400. */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  if (!ctx.request.is('application/json', '+json')) {
    throw problem(415, 'UnsupportedMediaType', `expected application/json, got ${ctx.get('content-type') || 'no content type'}`);
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) {
    throw problem(413, 'PayloadTooLarge', `body of ${declared} bytes exceeds the limit of ${limit} bytes`);
  }
  const text = await getRawBody(ctx.req, { length: declared, limit, encoding: 'utf8' });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw problem(400, 'BadRequest', `the body is not valid JSON: ${(error as Error).message}`);
  }
}
