import { Readable } from 'node:stream';
import Router from '@koa/router';
import { writeUpdates, writeUpdatesFrom } from '../../../domain/xml/index.ts';
import { updatesFrom, updatesPage } from '../../../services/reads/updates-feed.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { checkPageSize, parseParams, parseQuery } from '../../params.ts';
import { setV1XmlType } from '../xml.ts';
import { updatesFromPathSchema, updatesQuerySchema } from './schema.ts';

export function v1UpdatesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v1/updates' });

  router.get('/', requirePermission('read'), async (ctx) => {
    const query = parseQuery(ctx, updatesQuerySchema);
    checkPageSize(query.pageSize, deps.config.UPDATES_MAX_PAGE_SIZE);
    const records = await updatesPage(deps.db.feed, query.fromTransId, query.toTransId, query.page, query.pageSize);
    setV1XmlType(ctx);
    ctx.body = Readable.from(writeUpdates(records, 'v1'));
  });

  router.get('/from/:fromTransId', requirePermission('read'), async (ctx) => {
    const { fromTransId } = parseParams(ctx, updatesFromPathSchema);
    const feed = await updatesFrom(deps.db.feed, fromTransId, deps.config.UPDATES_FROM_MAX);
    setV1XmlType(ctx);
    ctx.body = Readable.from(writeUpdatesFrom(feed.info, feed.records, 'v1'));
  });

  return router;
}
