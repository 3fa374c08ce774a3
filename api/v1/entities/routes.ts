import Router from '@koa/router';
import { serializeEntity } from '../../../domain/xml/index.ts';
import { findCurrentRecord } from '../../../services/reads/entities.ts';
import { etagMatches, recordEtag } from '../../conditional.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { entityRefParam } from '../../params.ts';
import { problem } from '../../problems.ts';
import { setV1XmlType } from '../xml.ts';

export function v1EntitiesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v1/entities' });

  router.get('/:apid', requirePermission('read'), async (ctx) => {
    // The hottest read: logged at debug when it succeeds (api/middleware/request-context.ts).
    ctx.state.routineRead = true;
    const record = await findCurrentRecord(deps.db.records, entityRefParam(ctx, 'apid'));
    if (!record) throw problem(404, 'EntityNotFound', `no entity ${ctx.params.apid}`);
    ctx.set('Cache-Control', 'no-cache');
    if (etagMatches(ctx, recordEtag(record))) {
      ctx.status = 304;
      return;
    }
    setV1XmlType(ctx);
    ctx.body = serializeEntity(record, 'v1');
  });

  return router;
}
