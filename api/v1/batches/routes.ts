import { sawOwnWrite } from '../../../services/reads/read-side.ts';
import Router from '@koa/router';
import { serializeBatchResult } from '../../../domain/xml/index.ts';
import { batchOutcome, readBatchOutcome } from '../../../services/batches/status.ts';
import { submitBatch } from '../../../services/batches/submission.ts';
import { batchJobView } from '../../../services/jobs/view.ts';
import { awaitBatch, isFinished, unfinishedOutcome } from '../../../services/v1/await-batch.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission, signatureOf } from '../../middleware/auth.ts';
import { limitSubmissions } from '../../middleware/rate-limit.ts';
import { inUploadSlot } from '../../upload-slots.ts';
import { parseParams } from '../../params.ts';
import { problem } from '../../problems.ts';
import { respondProcessing } from '../processing.ts';
import { setV1XmlType } from '../xml.ts';
import { bidPathSchema } from './schema.ts';

export function v1BatchesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v1/batches' });

  // Synchronous in v1: the same workflow as v2, awaited. v1 has no force, so
  // warnings fail the batch (ET_PREF_NAME_EXIST) and the v1 document has no
  // forceKey. A batch still running at the deadline is answered with a `bue`
  // saying so (unfinishedOutcome: why not a final 102), and goes on running;
  // GET /response gives its outcome.
  router.post('/', requirePermission('write'), limitSubmissions(deps), async (ctx) => {
    const { batchId } = await inUploadSlot(deps, ctx, async (body) =>
      submitBatch(deps, {
        body,
        apiVersion: 'v1',
        principal: ctx.state.principal.name,
        force: false,
        mayForce: false,
        signature: signatureOf(ctx),
      }),
    );
    const batch = await awaitBatch(deps, batchId, deps.config.V1_BATCH_WAIT_SECONDS * 1000);
    setV1XmlType(ctx);
    if (!batch || !isFinished(batch)) {
      ctx.set('Location', `/api/v1/batches/${batchId}/response`);
      ctx.body = serializeBatchResult(unfinishedOutcome(batchId, deps.config.V1_BATCH_WAIT_SECONDS), 'v1');
      return;
    }
    await sawOwnWrite(deps.db.reads, ctx.state.principal.name, batch);
    ctx.body = serializeBatchResult(batchOutcome(batch), 'v1');
  });

  // The batch as the v2 status shows it: a batch whose status says ERROR has its answer (services/jobs/view.ts).
  router.get('/:bid/response', requirePermission('read'), async (ctx) => {
    const { bid } = parseParams(ctx, bidPathSchema);
    const view = await batchJobView(deps, bid);
    if (!view) throw problem(404, 'BatchNotFound', `no batch ${bid}`);
    const batch = view.row;
    if (!isFinished(batch)) {
      respondProcessing(ctx);
      return;
    }
    await sawOwnWrite(deps.db.reads, ctx.state.principal.name, batch);
    const outcome = await readBatchOutcome(deps, batch);
    setV1XmlType(ctx);
    ctx.body = serializeBatchResult(outcome, 'v1');
  });

  return router;
}
