import cors from '@koa/cors';
import type { Middleware } from 'koa';

/** The response headers a browser client needs to read: where a batch went, versions, file names, request ids, back-off, where a feed page ends, a search's unknown types. */
const EXPOSED_HEADERS = [
  'Location',
  'ETag',
  'Content-Disposition',
  'X-Request-Id',
  'Retry-After',
  'X-Content-SHA256',
  'X-Up-To-Trans-Id',
  'X-Unknown-Entity-Types',
];
const ALLOWED_METHODS = ['GET', 'HEAD', 'POST'];
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-None-Match', 'X-Request-Id', 'Accept', 'Accept-Encoding'];
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for the origins in CORS_ORIGINS only (spec §1.8: web applications call
 * the API). An origin not on the list gets no CORS headers, so the browser
 * refuses the answer; with an empty list nothing is allowed. Bearer tokens,
 * not cookies, carry identity, so credentials are never allowed.
 */
export function allowListedCors(origins: readonly string[]): Middleware {
  const allowed = new Set(origins);
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('origin');
      return allowed.has(origin) ? origin : '';
    },
    allowMethods: ALLOWED_METHODS,
    allowHeaders: ALLOWED_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  });
}
