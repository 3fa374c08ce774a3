import type { Context } from 'koa';
import type { Principal } from '../auth/tokens.ts';
import type { AppDeps } from '../deps.ts';
import { countAnonymousRead } from '../middleware/anonymous-limit.ts';
import { hasPermission } from '../middleware/auth.ts';
import { html } from './html.ts';
import { PageError } from './respond.ts';
import { SESSION_COOKIE, type SessionSigner } from './session.ts';

// Who may see the record pages (RECORD_PAGES): in `public` anyone, readers
// without credentials counted per source address; in `signed-in` a request
// whose credentials (a bearer token or an API key's signature, checked by the
// credential middleware) or whose session cookie name a principal that may
// read. The caller answers `off` before asking.

export interface Viewer {
  name: string;
  /** Signed in by the session cookie (so the page offers to sign out), not by credentials sent with the request. */
  session: boolean;
}

/** Resolves the request's viewer, or refuses it: 429 past the anonymous limit, a redirect to sign in, 403 without `read`. */
export async function admitReader(
  deps: Pick<AppDeps, 'config' | 'db'>,
  ctx: Context,
  sessions: () => SessionSigner | undefined,
): Promise<Viewer | undefined> {
  const viewer = viewerOf(ctx, deps.config.RECORD_PAGES === 'signed-in' ? sessions : () => undefined);
  if (viewer === undefined) await limitAnonymous(deps, ctx);
  if (deps.config.RECORD_PAGES === 'public') return viewer;
  if (viewer === undefined) throw new SignInNeeded(ctx.originalUrl);
  if (!hasPermission(ctx.state.principal as Principal, 'read')) {
    throw new PageError(403, 'Not allowed', `${viewer.name} may not read records: sign in with a token that has the read permission.`, {
      links: html`<p><a href="/global/sign-in">Sign in with another token</a></p>`,
    });
  }
  return viewer;
}

/** The principal of the request's credentials, else of its session cookie (set on ctx.state.principal, as credentials are). */
export function viewerOf(ctx: Context, sessions: () => SessionSigner | undefined): Viewer | undefined {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal !== undefined) return { name: principal.name, session: false };
  const fromCookie = sessions()?.principalOf(ctx.cookies.get(SESSION_COOKIE));
  if (fromCookie === undefined) return undefined;
  ctx.state.principal = fromCookie;
  return { name: fromCookie.name, session: true };
}

/** Counts a request without a principal against its address's budget; 429 past it. */
export async function limitAnonymous(deps: Pick<AppDeps, 'config' | 'db'>, ctx: Context): Promise<void> {
  const verdict = await countAnonymousRead(deps, ctx);
  if (!verdict.allowed) {
    throw new PageError(
      429,
      'Too many requests',
      `Too many pages were asked for from your address; try again in ${verdict.retryAfter} seconds.`,
      {
        headers: { 'Retry-After': String(verdict.retryAfter) },
      },
    );
  }
}

/** A page that needs a signed-in reader, asked for without one: the person is sent to sign in, and back. */
export class SignInNeeded extends Error {
  readonly next: string;

  constructor(next: string) {
    super('sign in to see the record pages');
    this.next = next;
  }
}
