import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import Router from '@koa/router';
import type { Context } from 'koa';
import { openExportDownload } from '../../../services/exports/download.ts';
import { directoryExportStore } from '../../../services/exports/files.ts';
import { startExport } from '../../../services/exports/start.ts';
import { exportJobDetail, exportJobStatus } from '../../../services/jobs/presenters.ts';
import { exportJobView, type JobViewOptions } from '../../../services/jobs/view.ts';
import { publicBaseUrl } from '../../public-url.ts';
import type { AppDeps } from '../../deps.ts';
import { requirePermission, signedRequestOf } from '../../middleware/auth.ts';
import { limitLongReads } from '../../middleware/long-reads.ts';
import { limitExportRequests } from '../../middleware/rate-limit.ts';
import { parseParams, parseQuery } from '../../params.ts';
import { problem } from '../../problems.ts';
import { readJsonBodyWithDigest } from '../../body.ts';
import { exportPathSchema, parseRequestedIds, revisionsQuerySchema, snapshotsQuerySchema } from './schema.ts';

/** Room for the longest list: a quoted UUID and a comma per identifier, with whitespace to spare. */
const BYTES_PER_ID = 64;

export function exportsRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/api/v2/export' });
  const store = directoryExportStore(deps.config.exportDir);
  const maxIds = deps.config.EXPORT_MAX_IDS;
  // The ids, and the request as the replay guard names it (signed requests only).
  const readStart = async (ctx: Context) => {
    const body = await readJsonBodyWithDigest(ctx, maxIds * BYTES_PER_ID + 1024);
    return { requestedIds: parseRequestedIds(body.value, maxIds), signedRequest: signedRequestOf(ctx, body.sha256) };
  };

  // The real client reads the export id as plain text (ExportRequestId).
  const accepted = (ctx: Context, id: string) => {
    ctx.set('Location', `/api/v2/export/${id}/detail`);
    ctx.type = 'text/plain';
    ctx.body = id;
  };

  router.post('/snapshots', requirePermission('export'), limitExportRequests(deps), async (ctx) => {
    const { format } = parseQuery(ctx, snapshotsQuerySchema);
    // EAC-CPF records link record pages under the service's public URL (api/public-url.ts), and name the registry (OAI_REPOSITORY_NAME).
    const eacCpf = format === 'eac-cpf' && {
      name: format,
      context: { origin: publicBaseUrl(ctx, deps.config), agencyName: deps.config.OAI_REPOSITORY_NAME },
    };
    const { id } = await startExport(deps, {
      kind: 'snapshot',
      ...(eacCpf ? { format: eacCpf } : {}),
      ...(await readStart(ctx)),
      principal: ctx.state.principal.name,
    });
    accepted(ctx, id);
  });

  router.post('/revisions', requirePermission('export'), limitExportRequests(deps), async (ctx) => {
    const { fromTransId } = parseQuery(ctx, revisionsQuerySchema);
    const { id } = await startExport(deps, {
      kind: 'revisions',
      ...(await readStart(ctx)),
      fromTransId,
      principal: ctx.state.principal.name,
    });
    accepted(ctx, id);
  });

  // While the export's workflow runs, its state comes from Temporal; otherwise from the row (services/jobs/view.ts).
  const requireExportJob = async (ctx: Context, options: JobViewOptions = {}) => {
    const { id } = parseParams(ctx, exportPathSchema);
    const view = await exportJobView(deps, id, options);
    if (!view) throw problem(404, 'ExportNotFound', `no export ${id}`);
    return view;
  };

  router.get('/status/:id', requirePermission('read'), async (ctx) => {
    ctx.body = exportJobStatus(await requireExportJob(ctx));
  });

  // The file as stored, or gzip-encoded for clients that accept it. The
  // SHA-256 is of the file itself: X-Content-SHA256 (hex) always, Digest
  // (base64) only on the unencoded answer, whose bytes it describes.
  router.get('/download/:id', requirePermission('export'), limitLongReads(deps), async (ctx) => {
    // The export as its status shows it: one whose status says ERROR is answered as FAILED, not as still running.
    const download = await openExportDownload(store, (await requireExportJob(ctx, { fresh: true })).row);
    ctx.attachment(download.filename, { type: 'attachment' });
    ctx.type = 'application/xml';
    ctx.set('X-Content-SHA256', download.sha256);
    // Where a consumer who loads this file follows the feed from (GET /updates/from/{it}).
    if (download.row.upToTransId) ctx.set('X-Up-To-Trans-Id', download.row.upToTransId);
    ctx.vary('Accept-Encoding');
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = pipeline(download.file.stream(), createGzip(), () => undefined);
    } else {
      ctx.set('Digest', `sha-256=${Buffer.from(download.sha256, 'hex').toString('base64')}`);
      ctx.body = download.file.stream();
      ctx.length = download.file.size;
    }
  });

  // Our extension (not in the real interface): kind, counts, times and expiry behind the status, and the workflow.
  router.get('/:id/detail', requirePermission('read'), async (ctx) => {
    ctx.body = exportJobDetail(await requireExportJob(ctx, { detail: true }));
  });

  return router;
}
