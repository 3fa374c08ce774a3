import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { parseOaiRequest, type ParsedRequest } from '../../domain/oai/protocol.ts';
import { tokenCodec, type TokenCodec } from '../../domain/oai/token.ts';
import { persistentSecret } from '../../secrets.ts';
import { oaiResponse } from '../../services/reads/oai.ts';
import type { AppDeps } from '../deps.ts';
import { publicBaseUrl } from '../public-url.ts';
import { oaiAccess } from './access.ts';

// OAI-PMH 2.0 at /oai, GET and POST (application/x-www-form-urlencoded), as
// the protocol allows. Protocol errors are OAI error elements in a 200;
// access and flow control (503 with Retry-After) are HTTP's (api/oai/access.ts).
// Every argument is checked before the answer begins, and the answer's first
// piece is made before its status is sent: what fails later (a statement
// timeout, a connection lost) is logged and counted as failed, and the
// connection closes on a document left unfinished, never a well-formed lie.

/** A form body of OAI arguments is a few hundred bytes; this is far above any. */
const FORM_MAX_BYTES = 64 * 1024;

export function oaiRouter(deps: AppDeps): Router {
  const router = new Router();
  const tokens = resumptionTokens(deps.config);
  const answer = async (ctx: Context, parsed: ParsedRequest) => {
    const origin = publicBaseUrl(ctx, deps.config);
    const body = await oaiResponse(deps, parsed, {
      baseUrl: `${origin}/oai`,
      schemasUrl: `${origin}/docs/schemas/`,
      publicUrl: origin,
      tokens,
    });
    const first = await body.next();
    ctx.type = 'text/xml; charset=utf-8';
    ctx.body = Readable.from(answeredOrFailed(ctx, first, body));
  };
  const access = oaiAccess(deps);
  router.get('/oai', access, async (ctx) => answer(ctx, parseOaiRequest([...new URLSearchParams(ctx.querystring)], tokens)));
  router.post('/oai', access, async (ctx) => answer(ctx, await formArguments(ctx, tokens)));
  return router;
}

/** OAI_TOKEN_SECRET, else the key generated once in DATA_DIR/secrets (as the admin token is); then the former keys still accepted. */
function resumptionTokens(config: AppDeps['config']): TokenCodec {
  return tokenCodec([persistentSecret(config.OAI_TOKEN_SECRET, config.DATA_DIR, 'oai-token-key'), ...config.OAI_TOKEN_PREVIOUS_SECRETS]);
}

/** The answer's pieces, its first already made; a failure after the status went out is logged and counted as the failure it is. */
async function* answeredOrFailed(ctx: Context, first: IteratorResult<Buffer>, rest: AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
  try {
    if (first.done) return;
    yield first.value;
    yield* rest;
  } catch (error) {
    ctx.state.failedAfterStatus = true;
    ctx.state.log?.error({ err: error, status: 500 }, 'OAI-PMH answer failed after its status was sent; connection closed');
    throw error;
  }
}

/** The arguments of a POST: a form body; any other body is a badArgument (the protocol defines no other). */
async function formArguments(ctx: Context, tokens: TokenCodec): Promise<ParsedRequest> {
  if (!ctx.request.is('application/x-www-form-urlencoded')) {
    return {
      ok: false,
      error: { code: 'badArgument', message: 'a POST to /oai carries its arguments as application/x-www-form-urlencoded' },
    };
  }
  const text = await getRawBody(ctx.req, { limit: FORM_MAX_BYTES, encoding: 'utf8' });
  return parseOaiRequest([...new URLSearchParams(text)], tokens);
}
