import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import getRawBody from 'raw-body';
import { parseOaiRequest, type ParsedRequest } from '../../domain/oai/protocol.ts';
import { oaiResponse } from '../../services/reads/oai.ts';
import type { AppDeps } from '../deps.ts';
import { countAnonymousRead } from '../middleware/anonymous-limit.ts';
import { hasPermission } from '../middleware/auth.ts';
import { problem } from '../problems.ts';

// OAI-PMH 2.0 at /oai, GET and POST (application/x-www-form-urlencoded), as
// the protocol allows. Protocol errors are OAI error elements in a 200;
// access (OAI_PMH) and flow control (503 with Retry-After) are HTTP's.

/** A form body of OAI arguments is a few hundred bytes; this is far above any. */
const FORM_MAX_BYTES = 64 * 1024;

export function oaiRouter(deps: AppDeps): Router {
  const router = new Router();
  const answer = async (ctx: Context, parsed: ParsedRequest) => {
    const origin = `${ctx.protocol}://${ctx.host}`;
    const body = await oaiResponse(deps, parsed, { baseUrl: `${origin}/oai`, schemasUrl: `${origin}/docs/schemas/` });
    ctx.type = 'text/xml; charset=utf-8';
    ctx.body = Readable.from(body);
  };
  router.get('/oai', oaiAccess(deps), async (ctx) => answer(ctx, parseOaiRequest([...new URLSearchParams(ctx.querystring)])));
  router.post('/oai', oaiAccess(deps), async (ctx) => answer(ctx, await formArguments(ctx)));
  return router;
}

/** OAI_PMH: public (anonymous harvesters limited per address), bearer (a principal with read), off (mounted by nobody: see buildApp). */
function oaiAccess(deps: AppDeps): Middleware {
  return async function oaiAccessMiddleware(ctx, next) {
    const principal = ctx.state.principal;
    if (deps.config.OAI_PMH === 'bearer' && principal === undefined) {
      const refused = problem(
        401,
        'Unauthorized',
        'this repository is harvested with a token: send "Authorization: Bearer <token>" (or sign the request with an API key)',
      );
      refused.headers = { 'WWW-Authenticate': 'Bearer realm="entity-records"' };
      throw refused;
    }
    if (principal !== undefined && !hasPermission(principal, 'read'))
      throw problem(403, 'Forbidden', "harvesting needs the 'read' permission");
    const verdict = await countAnonymousRead(deps, ctx);
    if (!verdict.allowed) {
      // OAI-PMH's flow control: harvesters wait Retry-After seconds and ask again.
      const refused = problem(503, 'TooManyRequests', `too many requests from this address; retry in ${verdict.retryAfter} s`);
      refused.headers = { 'retry-after': String(verdict.retryAfter) };
      throw refused;
    }
    return next();
  };
}

/** The arguments of a POST: a form body; any other body is a badArgument (the protocol defines no other). */
async function formArguments(ctx: Context): Promise<ParsedRequest> {
  if (!ctx.request.is('application/x-www-form-urlencoded')) {
    return {
      ok: false,
      error: { code: 'badArgument', message: 'a POST to /oai carries its arguments as application/x-www-form-urlencoded' },
    };
  }
  const text = await getRawBody(ctx.req, { limit: FORM_MAX_BYTES, encoding: 'utf8' });
  return parseOaiRequest([...new URLSearchParams(text)]);
}
