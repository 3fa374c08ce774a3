import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { isProblem, problem } from './problems.ts';

// Request bodies: the media type is checked first (415), a declared
// Content-Length over the route's limit is refused before a byte is read
// (413), and an undeclared (chunked) body is stopped at the limit. JSON
// bodies are small and read whole (raw-body); XML batch bodies are streamed.
// A client that asked to be told before it sends its body (Expect:
// 100-continue) is sent 100 Continue only when the body is read: a request
// refused earlier gets its refusal instead (api/readable-refusals.ts).

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
 * client goes away before the end (as raw-body did for whole bodies), or,
 * given a minimum rate, sends it slower than that (BodyRate).
 */
export function xmlBodyStream(ctx: Context, limit: number, minimumRate?: MinimumRate): AsyncIterable<Buffer> {
  if (!ctx.request.is(XML_TYPES)) unsupported(ctx, XML_TYPES.join(' or '));
  const declared = refuseDeclaredOverLimit(ctx, limit);
  return limitedChunks(ctx, limit, declared, minimumRate && new BodyRate(minimumRate));
}

async function* limitedChunks(ctx: Context, limit: number, declared: number | undefined, rate?: BodyRate): AsyncGenerator<Buffer> {
  const req = ctx.req;
  continueIfExpected(ctx);
  let received = 0;
  try {
    // Only the time spent waiting for the client counts towards its rate, not the time this side took with a chunk.
    let askedAt = performance.now();
    // Not destroyed when the reader stops early (413, a failure): the answer must still reach the client.
    for await (const chunk of req.iterator({ destroyOnReturn: false })) {
      received += (chunk as Buffer).length;
      // Stops reading, as raw-body did: the rest stays unread and the answer closes the connection.
      if (received > limit) throw problem(413, 'PayloadTooLarge', `body exceeds the limit of ${limit} bytes`);
      rate?.arrived((chunk as Buffer).length, performance.now() - askedAt);
      yield chunk as Buffer;
      askedAt = performance.now();
    }
  } catch (error) {
    if (isProblem(error)) throw error;
    throw problem(400, 'BadRequest', 'request aborted: the body ended before it was complete');
  }
  if (!req.complete || (declared !== undefined && received !== declared)) {
    throw problem(400, 'BadRequest', 'request aborted: the body ended before it was complete');
  }
}

/** Tells a client waiting with `Expect: 100-continue` to send its body, once: it is about to be read. */
function continueIfExpected(ctx: Context): void {
  const { req, res } = ctx;
  if (res.headersSent || continued.has(req) || req.headers.expect?.toLowerCase() !== '100-continue') return;
  continued.add(req);
  res.writeContinue();
}

const continued = new WeakSet<IncomingMessage>();

/** The slowest body an upload may send: measured over windows of this many seconds of waiting for it, the first one its grace. */
export interface MinimumRate {
  bytesPerSecond: number;
  windowSeconds: number;
  /** Called with the rate of the window that fell short, before the body is refused. */
  onTooSlow?: (bytesPerSecond: number) => void;
}

/**
 * The rate a body arrives at, in windows of the time spent waiting for the
 * client (not the time this side spends with what it sent, during which
 * TCP holds the client back). A window that ends below the minimum refuses
 * the body (400) and closes the connection: a slow client gets its answer
 * if it still reads; a trickling one loses its slot.
 */
class BodyRate {
  readonly #minimum: MinimumRate;
  #bytes = 0;
  #waitedMs = 0;

  constructor(minimum: MinimumRate) {
    this.#minimum = minimum;
  }

  arrived(bytes: number, waitedMs: number): void {
    this.#bytes += bytes;
    this.#waitedMs += waitedMs;
    const windowMs = this.#minimum.windowSeconds * 1000;
    if (this.#waitedMs < windowMs) return;
    const rate = Math.floor(this.#bytes / (this.#waitedMs / 1000));
    this.#bytes = 0;
    this.#waitedMs = 0;
    if (rate >= this.#minimum.bytesPerSecond) return;
    this.#minimum.onTooSlow?.(rate);
    const error = problem(
      400,
      'BadRequest',
      `the body arrived at ${rate} bytes/s over ${this.#minimum.windowSeconds} s, below the minimum of ${this.#minimum.bytesPerSecond} bytes/s; nothing of it was stored`,
    );
    // The rest of a trickled body is not waited for.
    error.headers = { ...error.headers, connection: 'close' };
    throw error;
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
  continueIfExpected(ctx);
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
  continueIfExpected(ctx);
  const bytes = await getRawBody(ctx.req, { length: declared, limit });
  return new URLSearchParams(new TextDecoder('utf-8').decode(bytes));
}
