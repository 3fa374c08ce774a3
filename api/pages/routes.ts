import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { EntityRecord } from '../../domain/model.ts';
import { findCurrentRecord, findRecordAtRevision, listRevisions } from '../../services/reads/entities.ts';
import { readSideFor } from '../../services/reads/read-side.ts';
import { ServiceError } from '../../services/errors.ts';
import { entityTypesInUse, searchByName, type SearchLimits } from '../../services/search/index.ts';
import { readFormBody } from '../body.ts';
import type { AppDeps } from '../deps.ts';
import { answerEacCpf } from '../reads/eac-cpf.ts';
import { hasPermission } from '../middleware/auth.ts';
import { admitReader, limitAnonymous, SignInNeeded, viewerOf, type Viewer } from './access.ts';
import { historyMain } from './history-view.ts';
import { html } from './html.ts';
import { historyPath, recordPath, refKey } from './links.ts';
import { nextParam, pageParam, recordRefParam, revisionParam, searchFormParams } from './params.ts';
import { recordMain, recordTitle, referencesOf, type ResolvedRefs } from './record-view.ts';
import { PageError, seeOther, sendError, sendPage } from './respond.ts';
import { sameOriginCheck } from './same-origin.ts';
import { sessionCookie, sessionSecret, sessionSigner, type SessionSigner } from './session.ts';
import { signInMain } from './sign-in-view.ts';
import { searchMain, type SearchOutcome } from './search-view.ts';

// /global: the record pages a person opens from a link (the registry's client
// links every record to /global/{id}) and the registry's front door, a name
// search. Server-rendered HTML without script. Access is the operator's
// choice (RECORD_PAGES, api/pages/access.ts); the credential middleware lets
// every /global path through, so every route here decides for itself.

const SEARCH_PAGE_SIZE = 20;
const HISTORY_ON_RECORD_PAGE = 10;
const HISTORY_PAGE_SIZE = 50;
/** References a record page shows by name; past these, by number alone. */
const NAMED_REFERENCES = 100;
const FORM_MAX_BYTES = 8 * 1024;
const STYLESHEET = new URL('./assets/pages.css', import.meta.url);

export function recordPagesRouter(deps: AppDeps): Router {
  const router = new Router();
  const { config } = deps;
  const limits: SearchLimits = {
    statementTimeoutMs: config.SEARCH_STATEMENT_TIMEOUT_MS,
    maxMatches: config.SEARCH_MAX_MATCHES,
  };
  // Made on first use, from the configured tokens.
  let signer: SessionSigner | undefined;
  // None when AUTH_DISABLED opened the service: every request then has a principal, and there is nothing to sign in with.
  const sessions = (): SessionSigner | undefined => {
    if (deps.tokens === 'disabled') return undefined;
    signer ??= sessionSigner(deps.tokens, sessionSecret(config), config.RECORD_PAGES_SESSION_HOURS);
    return signer;
  };
  let stylesheet: Buffer | undefined;
  const checkSameOrigin = sameOriginCheck(config);

  const frame: Middleware = async function recordPageFrame(ctx, next) {
    try {
      if (config.RECORD_PAGES === 'off') throw notFound();
      await next();
    } catch (error) {
      if (error instanceof SignInNeeded) return seeOther(ctx, `/global/sign-in?next=${encodeURIComponent(error.next)}`);
      const refusal = asPageError(ctx, error);
      const viewer = config.RECORD_PAGES === 'off' ? undefined : (ctx.state.viewer as Viewer | undefined);
      sendError(ctx, refusal, viewer);
    }
  };
  const reader: Middleware = async function recordPageReader(ctx, next) {
    ctx.state.viewer = await admitReader(deps, ctx, sessions);
    return next();
  };
  const signInOnly: Middleware = async function signInPagesOnly(ctx, next) {
    if (config.RECORD_PAGES !== 'signed-in') throw notFound();
    return next();
  };

  router.get('/global/assets/pages.css', frame, async (ctx) => {
    stylesheet ??= await readFile(STYLESHEET);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = stylesheet;
  });

  router.get('/global/sign-in', frame, signInOnly, async (ctx) => {
    const next = nextParam(ctx.query.next);
    if (viewerOf(ctx, sessions) !== undefined && hasPermission(ctx.state.principal, 'read')) return seeOther(ctx, next);
    await limitAnonymous(deps, ctx);
    sendPage(ctx, { title: 'Sign in', main: signInMain({ next }) });
    ctx.set('Cache-Control', 'no-store');
  });

  router.post('/global/sign-in', frame, signInOnly, async (ctx) => {
    const { https } = checkSameOrigin(ctx);
    await limitAnonymous(deps, ctx);
    const form = await readFormBody(ctx, FORM_MAX_BYTES);
    const next = nextParam(form.get('next'));
    const token = form.get('token')?.trim() ?? '';
    const signer = sessions();
    const principal = deps.tokens === 'disabled' ? undefined : deps.tokens.authenticate(token);
    if (signer === undefined || principal === undefined)
      return refuseSignIn(ctx, 401, next, 'That is not one of this service\u2019s access tokens.');
    if (!hasPermission(principal, 'read'))
      return refuseSignIn(ctx, 403, next, `The token of ${principal.name} does not have the read permission.`);
    const session = signer.issue(token);
    ctx.set('Set-Cookie', sessionCookie(session.value, session.maxAgeSeconds, https));
    seeOther(ctx, next);
  });

  router.post('/global/sign-out', frame, signInOnly, async (ctx) => {
    const { https } = checkSameOrigin(ctx);
    ctx.set('Set-Cookie', sessionCookie('', 0, https));
    seeOther(ctx, '/global/sign-in');
  });

  router.get('/global', frame, reader, async (ctx) => {
    const form = searchFormParams(ctx);
    const page = pageParam(ctx);
    const [outcome, typesInUse] = await Promise.all([
      search(deps, form, page, limits),
      entityTypesInUse((await readSideFor(deps.db.reads, undefined)).search),
    ]);
    const types = [...new Set([...typesInUse, ...form.types])].sort();
    sendPage(ctx, {
      title: 'Search',
      main: searchMain({ form, types, outcome, page, pageSize: SEARCH_PAGE_SIZE }),
      viewer: ctx.state.viewer,
    });
  });

  router.get('/global/:id', frame, reader, async (ctx) => {
    const ref = recordRefParam(ctx.params.id);
    // Pages for people, who write nothing: the freshest standby within REPLICA_MAX_LAG, one for the whole page.
    const { records } = await readSideFor(deps.db.reads, undefined);
    const [record, history] = await Promise.all([findCurrentRecord(records, ref), listRevisions(records, ref, 1, HISTORY_ON_RECORD_PAGE)]);
    if (record === undefined) throw recordNotFound(ctx.params.id!);
    const refs = await resolveReferences(deps, record);
    sendPage(ctx, {
      title: recordTitle(record),
      main: recordMain({ record, refs, history }),
      viewer: ctx.state.viewer,
      canonical: recordPath({ entityId: record.entityId }),
    });
  });

  // The record in EAC-CPF 2.0, as the API answers it to an Accept that asks for it: the link on the record's page.
  router.get('/global/:id/eac-cpf', frame, reader, async (ctx) => {
    const { records } = await readSideFor(deps.db.reads, undefined);
    const record = await findCurrentRecord(records, recordRefParam(ctx.params.id));
    if (record === undefined) throw recordNotFound(ctx.params.id!);
    answerEacCpf(ctx, deps, record);
  });

  router.get('/global/:id/revisions', frame, reader, async (ctx) => {
    const ref = recordRefParam(ctx.params.id);
    const page = pageParam(ctx);
    const { records } = await readSideFor(deps.db.reads, undefined);
    const [record, history] = await Promise.all([findCurrentRecord(records, ref), listRevisions(records, ref, page, HISTORY_PAGE_SIZE)]);
    if (record === undefined || history === undefined) throw recordNotFound(ctx.params.id!);
    const title = recordTitle(record);
    sendPage(ctx, { title: `History of ${title}`, main: historyMain(title, history, page, HISTORY_PAGE_SIZE), viewer: ctx.state.viewer });
  });

  router.get('/global/:id/revision/:rev', frame, reader, async (ctx) => {
    const ref = recordRefParam(ctx.params.id);
    const revisionId = revisionParam(ctx.params.rev);
    const { records } = await readSideFor(deps.db.reads, undefined);
    const [record, current] = await Promise.all([findRecordAtRevision(records, ref, revisionId), findCurrentRecord(records, ref)]);
    if (current === undefined) throw recordNotFound(ctx.params.id!);
    if (record === undefined)
      throw new PageError(404, 'No such revision', `Record ${ctx.params.id} has no revision ${revisionId}.`, {
        links: html`<p><a href="${historyPath(current.entityId)}">All revisions of this record</a></p>`,
      });
    const refs = await resolveReferences(deps, record);
    const isCurrent = record.revision.metadataRev === current.revision.metadataRev;
    sendPage(ctx, {
      title: `${recordTitle(record)} (revision)`,
      main: recordMain({ record, refs, revision: { id: record.revision.metadataRev, current: isCurrent } }),
      viewer: ctx.state.viewer,
    });
  });

  // Any other path or method under /global: a page that says so, not the API's problem+json.
  router.all('/global/*rest', frame, async (ctx) => {
    const served = router.match(ctx.path, 'GET').pathAndMethod.some((layer) => layer.path !== '/global/*rest');
    if (served && ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new PageError(405, 'Method not allowed', `${ctx.method} is not allowed here.`, { headers: { Allow: 'GET, HEAD' } });
    throw notFound();
  });

  return router;
}

async function search(
  deps: AppDeps,
  form: ReturnType<typeof searchFormParams>,
  page: number,
  limits: SearchLimits,
): Promise<SearchOutcome> {
  try {
    return {
      result: await searchByName((await readSideFor(deps.db.reads, undefined)).search, form, { page, pageSize: SEARCH_PAGE_SIZE }, limits),
    };
  } catch (error) {
    // The search's own refusals (too broad, too slow) are answers for the person, not failures of the page.
    if (error instanceof ServiceError && (error.code === 'BadRequest' || error.code === 'ServiceUnavailable'))
      return { refusal: readableRefusal(error) };
    throw error;
  }
}

/** A refusal of the search in a person's words: what to change, not the API's condition names. */
function readableRefusal(error: ServiceError): string {
  const properties = error.properties ?? {};
  if (properties.reason === 'SearchTimeout')
    return 'The search took too long and was stopped. Try again in a moment, or narrow it: a longer part of the name, a type or a state.';
  if (properties.minLength !== undefined)
    return `Give at least ${properties.minLength} characters of the name, or choose a type: a shorter text is in too many records to look up.`;
  if (properties.reason === 'SearchTooBroad')
    return 'The search matches too many records to count them. Narrow it: a longer part of the name, a type or a state.';
  return `The search cannot be answered: ${error.message}.`;
}

/** The records a record refers to (and the one that replaced it), read together, for their names. */
async function resolveReferences(deps: AppDeps, record: EntityRecord): Promise<ResolvedRefs> {
  const unique = new Map(referencesOf(record).map((ref) => [refKey(ref), ref]));
  const refs = [...unique.entries()].slice(0, NAMED_REFERENCES);
  const { records } = await readSideFor(deps.db.reads, undefined);
  const found = await Promise.all(refs.map(([, ref]) => findCurrentRecord(records, ref)));
  const resolved = new Map<string, { entityId: number; name: string }>();
  refs.forEach(([key], index) => {
    const target = found[index];
    if (target !== undefined) resolved.set(key, { entityId: target.entityId, name: recordTitle(target) });
  });
  return resolved;
}

function refuseSignIn(ctx: Context, status: number, next: string, message: string): void {
  sendPage(ctx, { title: 'Sign in', main: signInMain({ next, message }) }, status);
  ctx.set('Cache-Control', 'no-store');
}

function notFound(): PageError {
  return new PageError(404, 'Not found', 'There is no page at this address.');
}

function recordNotFound(id: string): PageError {
  return new PageError(404, 'No such record', `There is no record ${id} in this registry.`);
}

/** A failure of a page as the page a person sees: ours as they are; a request's fault by its status; anything else a 500 logged. */
function asPageError(ctx: Context, error: unknown): PageError {
  if (error instanceof PageError) return error;
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) return new PageError(status, 'Bad request', (error as Error).message);
  if (error instanceof ServiceError && error.code === 'ServiceUnavailable') {
    return new PageError(503, 'Busy', 'The registry is busy; try again in a moment.', { headers: { 'Retry-After': '5' } });
  }
  ctx.state.log?.error({ err: error }, 'record page failed');
  return new PageError(
    500,
    'Something went wrong',
    `The page could not be made. The service has logged it under the request id ${String(ctx.state.requestId ?? '')}.`,
  );
}
