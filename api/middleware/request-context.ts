import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.ts';

const REQUEST_ID_PATTERN = /^[\w.-]{1,128}$/;
/** A routine read slower than this is logged at info all the same. */
const SLOW_MS = 1000;

/**
 * Gives every request an id (echoed as X-Request-Id) and a logger that
 * carries it, and logs one line per request: at info, except a routine read
 * (a route that sets ctx.state.routineRead: GET of a current record) that
 * succeeded within SLOW_MS, which is logged at debug; the
 * http_request_duration_seconds metric counts every request. The request's
 * own logger is made only when something logs through it (an error,
 * mostly). Both were measurable parts of a GET's cost (docs/performance.md).
 */
export function requestContext(log: Logger): Middleware {
  return async function requestContextMiddleware(ctx, next) {
    const requestId = requestIdOf(ctx.get('x-request-id'));
    ctx.state.requestId = requestId;
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (child ??= log.child({ requestId })), enumerable: true });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      logRequest(
        log,
        { requestId, method: ctx.method, path: ctx.path, status: ctx.status, principal: ctx.state.principal?.name },
        started,
        ctx.state.routineRead === true,
      );
    }
  };
}

/** The request's id: the client's X-Request-Id when it is a sensible one, else a new UUID. */
export function requestIdOf(offered: string | undefined): string {
  return offered !== undefined && REQUEST_ID_PATTERN.test(offered) ? offered : randomUUID();
}

/** The request's line, once answered: at debug for a routine read that succeeded within SLOW_MS, else at info. */
export function logRequest(
  log: Logger,
  request: { requestId: string; method: string; path: string; status: number; principal: unknown },
  started: number,
  routineRead: boolean,
): void {
  const ms = Math.round(performance.now() - started);
  const routine = routineRead && request.status < 400 && ms < SLOW_MS;
  if (!routine || log.isLevelEnabled('debug')) {
    log[routine ? 'debug' : 'info']({ ...request, ms }, 'request');
  }
}
