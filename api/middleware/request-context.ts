import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.ts';

const REQUEST_ID_PATTERN = /^[\w.-]{1,128}$/;

/** Gives every request an id (echoed as X-Request-Id) and a logger that carries it. */
export function requestContext(log: Logger): Middleware {
  return async function requestContextMiddleware(ctx, next) {
    const offered = ctx.get('x-request-id');
    const requestId = REQUEST_ID_PATTERN.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      ctx.state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, principal: ctx.state.principal?.name, ms: Math.round(performance.now() - started) },
        'request',
      );
    }
  };
}
