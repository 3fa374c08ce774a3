import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.ts';
import type { SignedRequest } from '../../db/replay-guard.ts';
import { ApiKeyVerifier } from '../auth/api-keys.ts';
import { hostnameOf, NDA_DATE_HEADER, NDA_HMAC_SCHEME } from '../auth/nda-hmac.ts';
import type { Permission, Principal, TokenRegistry } from '../auth/tokens.ts';
import { problem } from '../problems.ts';

const PUBLIC_PATHS = [/^\/health$/, /^\/metrics$/, /^\/docs(\/.*)?$/, /^\/api\/v[12]\/openapi\.json$/];
const OPEN_PRINCIPAL: Principal = { name: 'anonymous', permissions: new Set(['admin']) };

type AuthConfig = Pick<Config, 'apiKeys' | 'API_KEY_CLOCK_SKEW_SECONDS' | 'API_KEY_REPLAY_GUARD' | 'TRUST_PROXY' | 'PUBLIC_HOST'>;

/**
 * Resolves the request's credentials to a principal on ctx.state: a bearer
 * token, or an NDA-HMAC-SHA256 signature of an API key. Public paths pass
 * without either. Every refusal is the same 401, whatever part failed.
 */
export function authenticate(tokens: TokenRegistry | 'disabled', config: AuthConfig): Middleware {
  const apiKeys = new ApiKeyVerifier(config.apiKeys, config.API_KEY_CLOCK_SKEW_SECONDS);
  return async function authenticateMiddleware(ctx, next) {
    if (tokens === 'disabled') {
      ctx.state.principal = OPEN_PRINCIPAL;
      return next();
    }
    const header = ctx.get('authorization');
    let principal: Principal | undefined;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (bearer) {
      principal = tokens.authenticate(bearer[1]!);
    } else if (header.slice(0, NDA_HMAC_SCHEME.length + 1).toUpperCase() === `${NDA_HMAC_SCHEME} `) {
      const verified = apiKeys.verify({ authorization: header, date: ctx.get(NDA_DATE_HEADER), host: signedHost(ctx, config), method: ctx.method, rawPath: ctx.path, rawQuery: ctx.querystring });
      if (verified) {
        principal = verified.principal;
        if (config.API_KEY_REPLAY_GUARD) ctx.state.signature = { keyId: verified.keyId, signature: verified.signature, expiresAt: new Date(verified.expiresAt) } satisfies RequestSignature;
      }
    }
    if (principal) {
      ctx.state.principal = principal;
      return next();
    }
    if (PUBLIC_PATHS.some((pattern) => pattern.test(ctx.path))) return next();
    throw unauthorized();
  };
}

/**
 * The host name the client signed: PUBLIC_HOST when set, else the Host header
 * (X-Forwarded-Host first behind a trusted proxy), without its port.
 */
function signedHost(ctx: Context, config: AuthConfig): string | undefined {
  if (config.PUBLIC_HOST) return config.PUBLIC_HOST;
  const forwarded = config.TRUST_PROXY ? ctx.get('x-forwarded-host').split(',')[0]!.trim() : '';
  return hostnameOf(forwarded || ctx.get('host'));
}

function unauthorized() {
  const error = problem(401, 'Unauthorized', `a valid Authorization header is required: a bearer token or an ${NDA_HMAC_SCHEME} signature`);
  error.headers = { 'WWW-Authenticate': `Bearer realm="entity-records", ${NDA_HMAC_SCHEME} realm="entity-records"` };
  return error;
}

export function hasPermission(principal: Principal | undefined, permission: Permission): boolean {
  return principal !== undefined && (principal.permissions.has(permission) || principal.permissions.has('admin'));
}

/** Route guard: 403 unless the principal holds `permission` (admin holds all). */
export function requirePermission(permission: Permission): Middleware {
  return async function requirePermissionMiddleware(ctx, next) {
    if (!hasPermission(ctx.state.principal, permission)) {
      throw problem(403, 'Forbidden', `this operation needs the '${permission}' permission`);
    }
    return next();
  };
}

/** What the auth middleware keeps of an HMAC signature on ctx.state.signature, when API_KEY_REPLAY_GUARD is on. */
type RequestSignature = Omit<SignedRequest, 'bodySha256'>;

/**
 * The request as the replay guard names it (db/replay-guard.ts): its key,
 * signature and body. Undefined for a request that is not HMAC-signed (a
 * bearer token has no signature to replay) or when API_KEY_REPLAY_GUARD is off.
 */
export function signedRequestOf(ctx: Context, bodySha256: Buffer): SignedRequest | undefined {
  const signature = ctx.state.signature as RequestSignature | undefined;
  return signature && { ...signature, bodySha256 };
}
