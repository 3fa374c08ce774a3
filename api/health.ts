import Router from '@koa/router';
import type { AppDeps } from './deps.ts';

const CHECK_TIMEOUT_MS = 2000;

export function healthRouter(deps: AppDeps): Router {
  const router = new Router();
  router.get('/health', async (ctx) => {
    const [database, temporal] = await Promise.all([
      probe(() => deps.db.ping()),
      probe(() =>
        deps.temporal.connection.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => deps.temporal.workflowService.getSystemInfo({})),
      ),
    ]);
    // Without Temporal the API still serves: reads, and v2 batches kept for the recovery sweep to start.
    // Without its database it serves nothing, and a load balancer should send its requests elsewhere.
    ctx.status = database ? 200 : 503;
    ctx.body = { status: database && temporal ? 'ok' : 'degraded', database: database ? 'up' : 'down', temporal: temporal ? 'up' : 'down' };
  });
  return router;
}

async function probe(check: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
