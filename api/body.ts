import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { problem } from './problems.ts';

// Request bodies: the media type is checked first (415), a declared
// Content-Length over the route's limit is refused before a byte is read
// (413), and raw-body stops an undeclared (chunked) body at the limit.

const XML_TYPES = ['application/xml', 'text/xml'];
const JSON_TYPES = ['application/json', '+json'];

function refuseDeclaredOverLimit(ctx: Context, limit: number): number | undefined {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) {
    throw problem(413, 'PayloadTooLarge', `body of ${declared} bytes exceeds the limit of ${limit} bytes`);
  }
  return declared;
}

function unsupported(ctx: Context, expected: string): never {
  throw problem(415, 'UnsupportedMediaType', `expected ${expected}, got ${ctx.get('content-type') || 'no content type'}`);
}

/** Reads an XML request body within `limit` bytes. */
export async function readXmlBody(ctx: Context, limit: number): Promise<Buffer> {
  if (!ctx.request.is(XML_TYPES)) unsupported(ctx, XML_TYPES.join(' or '));
  const declared = refuseDeclaredOverLimit(ctx, limit);
  return getRawBody(ctx.req, { length: declared, limit });
}

/** Reads and parses a JSON request body within `limit` bytes: 400 when absent or malformed. */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const type = ctx.request.is(JSON_TYPES);
  if (type === null) throw problem(400, 'BadRequest', 'a JSON body is required');
  if (type === false) unsupported(ctx, 'application/json');
  const declared = refuseDeclaredOverLimit(ctx, limit);
  const text = await getRawBody(ctx.req, { length: declared, limit, encoding: 'utf-8' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, refuseNul) as unknown;
  } catch (error) {
    if (error instanceof NulCharacterError) throw problem(400, 'BadRequest', error.message);
    throw problem(400, 'BadRequest', `malformed JSON: ${(error as Error).message}`);
  }
  return parsed;
}

class NulCharacterError extends Error {}

/** PostgreSQL text cannot hold U+0000: a JSON string with one would fail deep in a query, so it is refused here. */
function refuseNul(key: string, value: unknown): unknown {
  if (key.includes('\0') || (typeof value === 'string' && value.includes('\0'))) {
    throw new NulCharacterError('the JSON body holds a NUL character (\\u0000), which no field may contain');
  }
  return value;
}
