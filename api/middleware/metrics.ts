import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Histogram } from 'prom-client';
import type { HttpLabel } from '../../metrics/api.ts';

const UNMATCHED_ROUTE = 'unmatched';

/**
 * Observes every request's duration until its response is sent (or the
 * client goes away), labelled by the route pattern, never the raw URL, so
 * identifiers in paths cannot grow the label set.
 */
export function httpMetrics(histogram: Histogram<HttpLabel>, routers: readonly Router[]): Middleware {
  return async function httpMetricsMiddleware(ctx, next) {
    const end = histogram.startTimer();
    ctx.res.once('close', () =>
      end({ route: routeOf(ctx, routers), method: ctx.method, status: String(ctx.state.failedAfterStatus === true ? 500 : ctx.status) }),
    );
    await next();
  };
}

/**
 * The pattern the router matched; for a request refused before routing (a
 * 401 from authentication) the pattern its path would have matched.
 */
export function routeOf(ctx: Context, routers: readonly Router[]): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  if (typeof matched === 'string') return matched;
  for (const router of routers) {
    const layer = router.match(ctx.path, ctx.method).path.findLast((candidate) => candidate.methods.length > 0);
    if (layer && typeof layer.path === 'string') return layer.path;
  }
  return UNMATCHED_ROUTE;
}
