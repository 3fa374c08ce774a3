import Router from '@koa/router';
import { submitBatch } from '../../../services/batch-submission.ts';
import { readXmlBody } from '../../body.ts';
import type { AppDeps } from '../../deps.ts';

export function batchesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/batches' });

  router.post('/', async (ctx) => {
    const body = await readXmlBody(ctx, deps.config.BATCH_MAX_BYTES);
    const { batchId } = await submitBatch(deps, { body, apiVersion: 'v2', principal: ctx.state.principal?.name ?? 'anonymous' });
    ctx.status = 202;
    ctx.set('Location', `/api/v2/batches/${batchId}/status`);
    ctx.body = { updateRequestId: batchId };
  });

  return router;
}
