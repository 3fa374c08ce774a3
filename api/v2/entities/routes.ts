import Router from '@koa/router';
import { serializeEntity } from '../../../domain/xml/index.ts';
import { findCurrentRecord, findRecordAtRevision } from '../../../services/reads/entities.ts';
import type { AppDeps } from '../../deps.ts';
import { etagMatches, recordEtag } from '../../conditional.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { entityRefParam, parseParams } from '../../params.ts';
import { problem } from '../../problems.ts';
import { revisionPathSchema } from './schema.ts';

export function entitiesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/entities' });

  router.get('/:entityId', requirePermission('read'), async (ctx) => {
    // The hottest read: logged at debug when it succeeds (api/middleware/request-context.ts).
    ctx.state.routineRead = true;
    const record = await findCurrentRecord(deps.db.records, entityRefParam(ctx, 'entityId'));
    if (!record) throw problem(404, 'EntityNotFound', `no entity ${ctx.params.entityId}`);
    ctx.set('Cache-Control', 'no-cache');
    if (etagMatches(ctx, recordEtag(record))) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/xml';
    ctx.body = serializeEntity(record, 'v2');
  });

  router.get('/:entityId/revision/:revisionId', requirePermission('read'), async (ctx) => {
    const entityId = entityRefParam(ctx, 'entityId');
    const { revisionId } = parseParams(ctx, revisionPathSchema);
    const record = await findRecordAtRevision(deps.db.records, entityId, revisionId);
    if (!record) throw problem(404, 'RevisionNotFound', `entity ${ctx.params.entityId} has no revision ${revisionId}`);
    etagMatches(ctx, recordEtag(record));
    ctx.type = 'application/xml';
    ctx.body = serializeEntity(record, 'v2');
  });

  return router;
}
