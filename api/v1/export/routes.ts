import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context } from 'koa';
import { readSideFor } from '../../../services/reads/read-side.ts';
import { v1RevisionsDocument, v1SnapshotDocument } from '../../../services/reads/exports-stream.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission } from '../../middleware/auth.ts';
import { limitLongReads } from '../../middleware/long-reads.ts';
import { limitExportRequests } from '../../middleware/rate-limit.ts';
import { parseQuery, parseWith } from '../../params.ts';
import { readJsonBody } from '../../body.ts';
import { setV1XmlType } from '../xml.ts';
import { idListSchema, revisionsQuerySchema } from './schema.ts';

/** Room for the longest id list: a quoted UUID and a comma per id. */
const BYTES_PER_ID = 48;

// v1 exports are synchronous: the XML is streamed from a cursor into the
// response as it is read, so memory does not grow with the export.
export function v1ExportRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v1/export' });
  const longReads = limitLongReads(deps);
  const maxIds = deps.config.EXPORT_MAX_IDS;
  const readIds = async (ctx: Context) => parseWith(idListSchema(maxIds), await readJsonBody(ctx, maxIds * BYTES_PER_ID + 1024), 'body');

  router.post('/snapshots', requirePermission('export'), limitExportRequests(deps), longReads, async (ctx) => {
    const refs = await readIds(ctx);
    setV1XmlType(ctx);
    ctx.body = Readable.from(v1SnapshotDocument(await readSideFor(deps.db.reads, ctx.state.principal.name), refs));
  });

  router.post('/revisions', requirePermission('export'), limitExportRequests(deps), longReads, async (ctx) => {
    const { fromTransId } = parseQuery(ctx, revisionsQuerySchema);
    const refs = await readIds(ctx);
    const document = await v1RevisionsDocument(deps.db.reads, ctx.state.principal.name, fromTransId, refs);
    setV1XmlType(ctx);
    ctx.body = Readable.from(document);
  });

  return router;
}
