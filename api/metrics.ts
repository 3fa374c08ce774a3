import Router from '@koa/router';
import type { Registry } from 'prom-client';

/** GET /metrics: the Prometheus text exposition, public like /health. */
export function metricsRouter(registry: Pick<Registry, 'contentType' | 'metrics'>): Router {
  const router = new Router();
  router.get('/metrics', async (ctx) => {
    ctx.set('Content-Type', registry.contentType);
    ctx.body = await registry.metrics();
  });
  return router;
}
