import { timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Registry } from 'prom-client';
import { sha256 } from './auth/tokens.ts';
import { problem } from './problems.ts';

/**
 * GET /metrics: the Prometheus text exposition. With METRICS_TOKEN set, only
 * for a scraper that sends it (`Authorization: Bearer <METRICS_TOKEN>`);
 * without, public like /health.
 */
export function metricsRouter(registry: Pick<Registry, 'contentType' | 'metrics'>, token?: string): Router {
  const router = new Router();
  const expected = token === undefined ? undefined : sha256(token);
  router.get('/metrics', async (ctx) => {
    if (expected !== undefined) {
      const presented = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
      if (presented === undefined || !timingSafeEqual(sha256(presented), expected)) {
        const error = problem(401, 'Unauthorized', 'GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>"');
        error.headers = { 'WWW-Authenticate': 'Bearer realm="entity-records-metrics"' };
        throw error;
      }
    }
    ctx.set('Content-Type', registry.contentType);
    ctx.body = await registry.metrics();
  });
  return router;
}
