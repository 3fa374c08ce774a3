import { timingSafeEqual } from 'node:crypto';
import { join, resolve } from 'node:path';
import Router from '@koa/router';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import { persistentSecret } from '../secrets.ts';
import { sha256 } from './auth/tokens.ts';
import { problem } from './problems.ts';

// GET /metrics: the Prometheus text exposition, only for a scraper that
// sends its token (`Authorization: Bearer <token>`): METRICS_TOKEN, else one
// generated on the first start and kept in DATA_DIR/secrets/metrics-token.
// Never public: its counts and routes describe the registry's use
// (docs/decisions/0187). API tokens do not open it, nor it the API.

const GENERATED = 'metrics-token';

/** The token /metrics answers: METRICS_TOKEN, else the one generated in DATA_DIR (created here when missing). */
export function metricsToken(config: Pick<Config, 'METRICS_TOKEN' | 'DATA_DIR'>): string {
  return persistentSecret(config.METRICS_TOKEN, config.DATA_DIR, GENERATED);
}

/** Where the generated token is kept; undefined when METRICS_TOKEN is set. */
export function generatedMetricsTokenFile(config: Pick<Config, 'METRICS_TOKEN' | 'DATA_DIR'>): string | undefined {
  return config.METRICS_TOKEN ? undefined : join(resolve(config.DATA_DIR, 'secrets'), GENERATED);
}

export function metricsRouter(registry: Pick<Registry, 'contentType' | 'metrics'>, token: string): Router {
  const router = new Router();
  const expected = sha256(token);
  router.get('/metrics', async (ctx) => {
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
    if (presented === undefined || !timingSafeEqual(sha256(presented), expected)) {
      const error = problem(
        401,
        'Unauthorized',
        'GET /metrics needs "Authorization: Bearer <metrics token>" (METRICS_TOKEN, or DATA_DIR/secrets/metrics-token)',
      );
      error.headers = { 'WWW-Authenticate': 'Bearer realm="entity-records-metrics"' };
      throw error;
    }
    ctx.set('Content-Type', registry.contentType);
    ctx.body = await registry.metrics();
  });
  return router;
}
