import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { XmlVersion } from '../../domain/model.ts';
import { writeUpdates, writeUpdatesFrom } from '../../domain/xml/index.ts';
import { updatesFrom, updatesPage } from '../../services/reads/updates-feed.ts';
import type { AppDeps } from '../deps.ts';
import { requirePermission } from '../middleware/auth.ts';
import { limitLongReads } from '../middleware/long-reads.ts';
import { checkPageSize, parseParams, parseQuery } from '../params.ts';
import { updatesFromPathSchema, updatesQuerySchema } from '../v2/updates/schema.ts';
import { setXmlType } from '../xml-type.ts';

// The change feed, one router per interface version: v1 takes v2's parameters
// and caps and differs only in the XML it answers.
export function updatesRouter(deps: AppDeps, version: XmlVersion): Router {
  const router = new Router({ prefix: `/api/${version}/updates` });
  const longReads = limitLongReads(deps);

  router.get('/', requirePermission('read'), longReads, async (ctx) => {
    const query = parseQuery(ctx, updatesQuerySchema);
    checkPageSize(query.pageSize, deps.config.UPDATES_MAX_PAGE_SIZE);
    const records = await updatesPage(deps.db.reads, query.fromTransId, query.toTransId, query.page, query.pageSize);
    setXmlType(ctx, version);
    ctx.body = Readable.from(writeUpdates(records, version));
  });

  router.get('/from/:fromTransId', requirePermission('read'), longReads, async (ctx) => {
    const { fromTransId } = parseParams(ctx, updatesFromPathSchema);
    const feed = await updatesFrom(deps.db.reads, fromTransId, deps.config.UPDATES_FROM_MAX);
    setXmlType(ctx, version);
    ctx.body = Readable.from(writeUpdatesFrom(feed.info, feed.records, version));
  });

  return router;
}
