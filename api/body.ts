import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { isProblem, problem } from './problems.ts';

// Request bodies: the media type is checked first (415), a declared
// Content-Length over the route's limit is refused before a byte is read
// (413), and an undeclared (chunked) body is stopped at the limit. JSON
// bodies are small and read whole (raw-body); XML batch bodies are streamed.

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

/**
 * An XML request body as it arrives, within `limit` bytes: the media type and
 * a declared length are checked before a byte is read; the chunks then come
 * as the client sends them (no more than the socket's buffers in memory), and
 * the iteration throws 413 at the first byte over the limit and 400 when the
 * client goes away before the end (as raw-body did for whole bodies).
 */
export function xmlBodyStream(ctx: Context, limit: number): AsyncIterable<Buffer> {
  if (!ctx.request.is(XML_TYPES)) unsupported(ctx, XML_TYPES.join(' or '));
  const declared = refuseDeclaredOverLimit(ctx, limit);
  return limitedChunks(ctx.req, limit, declared);
}

async function* limitedChunks(req: IncomingMessage, limit: number, declared: number | undefined): AsyncGenerator<Buffer> {
  let received = 0;
  try {
    // Not destroyed when the reader stops early (413, a failure): the answer must still reach the client.
    for await (const chunk of req.iterator({ destroyOnReturn: false })) {
      received += (chunk as Buffer).length;
      // Stops reading, as raw-body did: the rest stays unread and the answer closes the connection.
      if (received > limit) throw problem(413, 'PayloadTooLarge', `body exceeds the limit of ${limit} bytes`);
      yield chunk as Buffer;
    }
  } catch (error) {
    if (isProblem(error)) throw error;
    throw problem(400, 'BadRequest', 'request aborted: the body ended before it was complete');
  }
  if (!req.complete || (declared !== undefined && received !== declared)) {
    throw problem(400, 'BadRequest', 'request aborted: the body ended before it was complete');
  }
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

/** A small HTML form's body (application/x-www-form-urlencoded) within `limit` bytes. */
export async function readFormBody(ctx: Context, limit: number): Promise<URLSearchParams> {
  if (!ctx.request.is('application/x-www-form-urlencoded')) unsupported(ctx, 'application/x-www-form-urlencoded');
  const declared = refuseDeclaredOverLimit(ctx, limit);
  const bytes = await getRawBody(ctx.req, { length: declared, limit });
  return new URLSearchParams(new TextDecoder('utf-8').decode(bytes));
}
