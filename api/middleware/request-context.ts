import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.ts';

const REQUEST_ID_PATTERN = /^[\w.-]{1,128}$/;

/**
 * Gives every request an id (echoed as X-Request-Id) and a logger that
 * carries it, and logs one line per request. The request's own logger is
 * made only when something logs through it (an error, mostly): most requests
 * never need one, and a child logger per request was a measurable part of a
 * GET's cost (docs/performance.md).
 */
export function requestContext(log: Logger): Middleware {
  return async function requestContextMiddleware(ctx, next) {
    const offered = ctx.get('x-request-id');
    const requestId = REQUEST_ID_PATTERN.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (child ??= log.child({ requestId })), enumerable: true });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      log.info(
        { requestId, method: ctx.method, path: ctx.path, status: ctx.status, principal: ctx.state.principal?.name, ms: Math.round(performance.now() - started) },
        'request',
      );
    }
  };
}
