import { sawOwnWrite } from '../../../services/reads/read-side.ts';
import Router from '@koa/router';
import type { Context } from 'koa';
import { serializeBatchResult } from '../../../domain/xml/index.ts';
import { readBatchOutcome } from '../../../services/batches/status.ts';
import { batchJobDetail, batchJobStatus } from '../../../services/jobs/presenters.ts';
import { batchJobView, type JobViewOptions } from '../../../services/jobs/view.ts';
import { submitBatch } from '../../../services/batches/submission.ts';
import { testBatch } from '../../../services/batches/test-batch.ts';
import type { AppDeps } from '../../deps.ts';
import { hasPermission, requirePermission, signatureOf } from '../../middleware/auth.ts';
import { limitSubmissions } from '../../middleware/rate-limit.ts';
import { inUploadSlot } from '../../upload-slots.ts';
import { parseParams, parseQuery } from '../../params.ts';
import { problem } from '../../problems.ts';
import { batchPathSchema, submitQuerySchema } from './schema.ts';

export function batchesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/batches' });

  router.post('/', requirePermission('write'), limitSubmissions(deps), async (ctx) => {
    const query = parseQuery(ctx, submitQuerySchema);
    const mayForce = hasPermission(ctx.state.principal, 'force');
    if (query.force && !mayForce && query.forceKey === undefined) {
      throw problem(403, 'Forbidden', "force=true needs the 'force' permission, or the forceKey that this batch's result gave");
    }
    const { batchId } = await inUploadSlot(deps, ctx, async (body) =>
      submitBatch(deps, {
        body,
        apiVersion: 'v2',
        principal: ctx.state.principal.name,
        force: query.force,
        mayForce,
        forceKey: query.forceKey,
        signature: signatureOf(ctx),
      }),
    );
    // The real client's generated code reads the answer as a JSON string (UpdateRequestId).
    ctx.status = 200;
    ctx.set('Location', `/api/v2/batches/${batchId}/detail`);
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(batchId);
  });

  router.post('/test', requirePermission('write'), limitSubmissions(deps), async (ctx) => {
    const result = await inUploadSlot(deps, ctx, async (body) => testBatch(deps, body, 'v2', ctx.state.principal.name));
    ctx.type = 'application/xml';
    ctx.body = serializeBatchResult(result, 'v2');
  });

  // While the batch's workflow runs, its state comes from Temporal; otherwise from the row (services/jobs/view.ts).
  const requireBatchJob = async (ctx: Context, options: JobViewOptions = {}) => {
    const { updateRequestId } = parseParams(ctx, batchPathSchema);
    const view = await batchJobView(deps, updateRequestId, options);
    if (!view) throw problem(404, 'BatchNotFound', `no batch ${updateRequestId}`);
    return view;
  };

  router.get('/:updateRequestId/status', requirePermission('read'), async (ctx) => {
    const view = await requireBatchJob(ctx);
    await sawOwnWrite(deps.db.reads, ctx.state.principal.name, view.row);
    ctx.body = batchJobStatus(view);
  });

  // Our extension (not in the real interface): the counts, times and attempt behind the status, and the workflow.
  router.get('/:updateRequestId/detail', requirePermission('read'), async (ctx) => {
    ctx.body = batchJobDetail(await requireBatchJob(ctx, { detail: true }));
  });

  // The batch as its status shows it: once the status said FINISHED or ERROR, the result is there (services/jobs/view.ts).
  router.get('/:updateRequestId/result', requirePermission('read'), async (ctx) => {
    const { row: batch } = await requireBatchJob(ctx, { fresh: true });
    const { updateRequestId } = parseParams(ctx, batchPathSchema);
    if (batch.status !== 'COMPLETED' && batch.status !== 'FAILED') {
      throw problem(409, 'BatchNotFinished', `batch ${updateRequestId} is ${batch.status}; poll its status`);
    }
    await sawOwnWrite(deps.db.reads, ctx.state.principal.name, batch);
    const outcome = await readBatchOutcome(deps, batch);
    ctx.type = 'application/xml';
    ctx.body = serializeBatchResult(outcome, 'v2');
  });

  return router;
}
