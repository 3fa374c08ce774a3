import Router from '@koa/router';
import { pgPool } from '../../../db/orm.ts';
import { serializeBatchResult } from '../../../domain/xml/index.ts';
import { batchOutcome, batchStatusView } from '../../../services/batches/status.ts';
import { findBatch } from '../../../services/batches/store.ts';
import { submitBatch } from '../../../services/batches/submission.ts';
import { testBatch } from '../../../services/batches/test-batch.ts';
import { readXmlBody } from '../../body.ts';
import type { AppDeps } from '../../deps.ts';
import { hasPermission, requirePermission } from '../../middleware/auth.ts';
import { limitSubmissions } from '../../middleware/rate-limit.ts';
import { inUploadSlot } from '../../upload-slots.ts';
import { parseParams, parseQuery } from '../../params.ts';
import { problem } from '../../problems.ts';
import { batchPathSchema, submitQuerySchema } from './schema.ts';

export function batchesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/batches' });

  router.post('/', requirePermission('write'), limitSubmissions(deps.config), async (ctx) => {
    const query = parseQuery(ctx, submitQuerySchema);
    if (query.force && !hasPermission(ctx.state.principal, 'force')) {
      throw problem(403, 'Forbidden', "force=true needs the 'force' permission");
    }
    const { batchId } = await inUploadSlot(deps.config, async () =>
      submitBatch(deps, {
        body: await readXmlBody(ctx, deps.config.BATCH_MAX_BYTES),
        apiVersion: 'v2',
        principal: ctx.state.principal.name,
        force: query.force,
        forceKey: query.forceKey,
      }),
    );
    ctx.status = 202;
    ctx.set('Location', `/api/v2/batches/${batchId}/status`);
    ctx.body = { updateRequestId: batchId };
  });

  router.post('/test', requirePermission('write'), limitSubmissions(deps.config), async (ctx) => {
    const result = await inUploadSlot(deps.config, async () =>
      testBatch(deps, await readXmlBody(ctx, deps.config.BATCH_MAX_BYTES), 'v2', ctx.state.principal.name),
    );
    ctx.type = 'application/xml';
    ctx.body = serializeBatchResult(result, 'v2');
  });

  router.get('/:updateRequestId/status', requirePermission('read'), async (ctx) => {
    const { updateRequestId } = parseParams(ctx, batchPathSchema);
    const batch = await findBatch(await pgPool(deps.orm), updateRequestId);
    if (!batch) throw problem(404, 'BatchNotFound', `no batch ${updateRequestId}`);
    ctx.body = batchStatusView(batch);
  });

  router.get('/:updateRequestId/result', requirePermission('read'), async (ctx) => {
    const { updateRequestId } = parseParams(ctx, batchPathSchema);
    const batch = await findBatch(await pgPool(deps.orm), updateRequestId);
    if (!batch) throw problem(404, 'BatchNotFound', `no batch ${updateRequestId}`);
    if (batch.status !== 'COMPLETED' && batch.status !== 'FAILED') {
      throw problem(409, 'BatchNotFinished', `batch ${updateRequestId} is ${batch.status}; poll its status`);
    }
    ctx.type = 'application/xml';
    ctx.body = serializeBatchResult(batchOutcome(batch), 'v2');
  });

  return router;
}
