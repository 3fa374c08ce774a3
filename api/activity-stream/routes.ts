import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { activityStreamEntryPoint, activityStreamPage, type ServedDocument } from '../../services/reads/activity-stream.ts';
import { etagMatches } from '../conditional.ts';
import type { AppDeps } from '../deps.ts';
import { countAnonymousRead } from '../middleware/anonymous-limit.ts';
import { hasPermission } from '../middleware/auth.ts';
import { limitLongReads } from '../middleware/long-reads.ts';
import { parseParams } from '../params.ts';
import { problem } from '../problems.ts';
import { pagePathSchema } from './schema.ts';

// The change feed as Activity Streams 2.0 (LD4 Entity Metadata Management
// 1.0) at /activity-stream. Who may follow it is OAI_PMH's setting: the two
// serve the same harvesters. Mounted by nobody when OAI_PMH=off (see buildApp).

const MEDIA_TYPES = ['application/ld+json', 'application/activity+json'] as const;
const LD_JSON = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"';

export function activityStreamRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/activity-stream' });
  const access = streamAccess(deps);
  const urls = (ctx: Context) => {
    const origin = `${ctx.protocol}://${ctx.host}`;
    return { collection: `${origin}/activity-stream`, records: `${origin}/global` };
  };

  router.get('/', access, async (ctx) => {
    send(
      ctx,
      deps,
      await activityStreamEntryPoint(
        (await deps.db.reads.side({ fresh: true })).activityStream,
        urls(ctx),
        deps.config.ACTIVITY_STREAM_PAGE_SIZE,
      ),
    );
  });

  router.get('/page/:after', access, async (ctx) => {
    const { after } = parseParams(ctx, pagePathSchema);
    send(
      ctx,
      deps,
      await activityStreamPage(
        // A page after a position the client was given: on a standby that has reached it.
        (await deps.db.reads.side({ commitSeq: after.commitSeq })).activityStream,
        urls(ctx),
        deps.config.ACTIVITY_STREAM_PAGE_SIZE,
        after,
      ),
    );
  });

  return router;
}

function send(ctx: Context, deps: AppDeps, served: ServedDocument): void {
  // Anything but activity+json (JSON, any type, none) is answered in JSON-LD, as the other reads fall back to their default.
  const type = ctx.accepts(...MEDIA_TYPES);
  ctx.vary('Accept');
  // Behind a token a page is the principal's to cache, not a shared cache's.
  const audience = deps.config.OAI_PMH === 'public' ? 'public' : 'private';
  ctx.set('Cache-Control', served.immutable ? `${audience}, max-age=31536000, immutable` : `${audience}, no-cache`);
  if (etagMatches(ctx, served.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = type === 'application/activity+json' ? 'application/activity+json' : LD_JSON;
  ctx.body = served.body;
}

/** OAI_PMH: public (anonymous readers limited per address), bearer (a principal with read). A principal's pages are long reads. */
function streamAccess(deps: AppDeps): Middleware {
  const longReads = limitLongReads(deps);
  return async function activityStreamAccess(ctx, next) {
    const principal = ctx.state.principal;
    if (principal === undefined) {
      if (deps.config.OAI_PMH === 'bearer') {
        const refused = problem(401, 'Unauthorized', 'the activity stream is followed with a token: send "Authorization: Bearer <token>"');
        refused.headers = { 'WWW-Authenticate': 'Bearer realm="entity-records"' };
        throw refused;
      }
      const verdict = await countAnonymousRead(deps, ctx);
      if (!verdict.allowed) {
        const refused = problem(429, 'TooManyRequests', `too many requests from this address; retry in ${verdict.retryAfter} s`);
        refused.headers = { 'retry-after': String(verdict.retryAfter) };
        throw refused;
      }
      return next();
    }
    if (!hasPermission(principal, 'read')) throw problem(403, 'Forbidden', "following the activity stream needs the 'read' permission");
    return longReads(ctx, next);
  };
}
