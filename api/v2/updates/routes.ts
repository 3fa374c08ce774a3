import { Readable } from 'node:stream';
import Router from '@koa/router';
import { writeUpdates, writeUpdatesFrom } from '../../../domain/xml/index.ts';
import { updatesFrom, updatesPage } from '../../../services/reads/updates-feed.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { checkPageSize, parseParams, parseQuery } from '../../params.ts';
import { updatesFromPathSchema, updatesQuerySchema } from './schema.ts';

export function updatesRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/updates' });

  router.get('/', requirePermission('read'), async (ctx) => {
    const query = parseQuery(ctx, updatesQuerySchema);
    checkPageSize(query.pageSize, deps.config.UPDATES_MAX_PAGE_SIZE);
    const records = await updatesPage(deps.db.feed, query.fromTransId, query.toTransId, query.page, query.pageSize);
    ctx.type = 'application/xml';
    ctx.body = Readable.from(writeUpdates(records, 'v2'));
  });

  router.get('/from/:fromTransId', requirePermission('read'), async (ctx) => {
    const { fromTransId } = parseParams(ctx, updatesFromPathSchema);
    const feed = await updatesFrom(deps.db.feed, fromTransId, deps.config.UPDATES_FROM_MAX);
    ctx.type = 'application/xml';
    ctx.body = Readable.from(writeUpdatesFrom(feed.info, feed.records, 'v2'));
  });

  return router;
}
