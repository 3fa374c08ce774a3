import { createHash } from 'node:crypto';
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
  return parseJson(await readJsonBytes(ctx, limit));
}

/** readJsonBody, with the SHA-256 of the body's bytes as sent (the replay guard's name for the body). */
export async function readJsonBodyWithDigest(ctx: Context, limit: number): Promise<{ value: unknown; sha256: Buffer }> {
  const bytes = await readJsonBytes(ctx, limit);
  return { value: parseJson(bytes), sha256: createHash('sha256').update(bytes).digest() };
}

async function readJsonBytes(ctx: Context, limit: number): Promise<Buffer> {
  const type = ctx.request.is(JSON_TYPES);
  if (type === null) throw problem(400, 'BadRequest', 'a JSON body is required');
  if (type === false) unsupported(ctx, 'application/json');
  const declared = refuseDeclaredOverLimit(ctx, limit);
  return getRawBody(ctx.req, { length: declared, limit });
}

function parseJson(bytes: Buffer): unknown {
  // UTF-8, a byte order mark dropped and a malformed sequence read as U+FFFD (as raw-body's decoder did).
  const text = new TextDecoder('utf-8').decode(bytes);
  try {
    return JSON.parse(text, withoutNul) as unknown;
  } catch (error) {
    throw problem(400, 'BadRequest', `malformed JSON: ${(error as Error).message}`);
  }
}

/**
 * PostgreSQL text cannot hold U+0000, so a JSON string with one would fail
 * deep in a query. It is read with U+FFFD in its place: no stored value holds
 * that either, so such a search value matches nothing, and an identifier with
 * it is not well formed (400), while every JSON string stays acceptable.
 */
function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}
