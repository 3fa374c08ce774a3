import { isAbsolute } from 'node:path';
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.ts';
import type { ErrorProperties } from '../../services/errors.ts';
import type { SignedRequest } from '../../services/jobs/submission-guards.ts';
import { ApiKeyVerifier, type SignatureRefusalReason } from '../auth/api-keys.ts';
import { NDA_DATE_HEADER, NDA_HMAC_SCHEME } from '../auth/nda-hmac.ts';
import { generatedTokenFile, type Principal, type TokenRegistry, type TokenSources } from '../auth/tokens.ts';
import { hostnameOf } from '../../settings/host-name.ts';
import type { Permission } from '../../settings/permissions.ts';
import { clientAddress } from '../client-address.ts';
import { forwardedHeader, forwardedTrust } from '../forwarded.ts';
import type { AppDeps } from '../deps.ts';
import { problem } from '../problems.ts';
import { authFailureThrottle } from './auth-failures.ts';

// /global (record pages), /oai (OAI-PMH) and /activity-stream decide their own access (RECORD_PAGES, OAI_PMH): public, signed-in or off.
const PUBLIC_PATHS = [
  /^\/health$/,
  /^\/metrics$/,
  /^\/docs(\/.*)?$/,
  /^\/api\/v[12]\/openapi\.json$/,
  /^\/global(\/.*)?$/,
  /^\/oai$/,
  /^\/activity-stream(\/.*)?$/,
];
/** The scheme of the registry's client, whatever follows it: a malformed rest is that scheme's refusal, not another scheme. */
const NDA_HMAC_HEADER = new RegExp(`^${NDA_HMAC_SCHEME}(\\s|$)`, 'i');
const OPEN_PRINCIPAL: Principal = { name: 'anonymous', permissions: new Set(['admin']) };

type AuthConfig = Pick<Config, 'apiKeys' | 'API_KEY_CLOCK_SKEW_SECONDS' | 'API_KEY_REPLAY_GUARD' | 'PUBLIC_HOST'> & TokenSources;

/** Why a request got no principal: the 401's `properties.reason` (stable) and its detail (for a person). */
interface Refusal {
  reason: 'NoCredentials' | 'UnknownToken' | 'UnsupportedScheme' | SignatureRefusalReason;
  /** For the log only (never the answer): what a SignatureMismatch really was. */
  why?: string;
  detail: string;
  properties?: ErrorProperties;
}

/** The parts of a request its credentials are checked against: what Koa's context and a bare request both give. */
export interface CredentialRequest {
  /** The Authorization header ('' when absent). */
  authorization: string;
  /** The X-NDA-Date header ('' when absent). */
  date: string;
  /** The Host header ('' when absent). */
  host: string;
  /** The X-Forwarded-Host a trusted proxy sent (api/forwarded.ts), else ''. */
  forwardedHost: string;
  method: string;
  rawPath: string;
  rawQuery: string;
  /** The client's address (api/client-address.ts). */
  clientAddress: string;
}

export type CredentialCheck = { ok: true; principal: Principal; signature?: RequestSignature } | { ok: false; refusal: Refusal };

/**
 * The principal a request's credentials name: a bearer token, or an
 * NDA-HMAC-SHA256 signature of an API key; else why not. Shared by the
 * middleware below and the GET of a record (api/reads/entity-get.ts).
 */
export function credentialChecker(tokens: TokenRegistry | 'disabled', config: AuthConfig): (request: CredentialRequest) => CredentialCheck {
  const apiKeys = new ApiKeyVerifier(config.apiKeys, config.API_KEY_CLOCK_SKEW_SECONDS);
  const tokenFile = generatedTokenFile(config);
  // Where a local user finds the token, which no output ever shows (api/auth/tokens.ts); /docs says the same (api/docs/token-note.ts).
  const tokenHint =
    tokenFile === undefined
      ? ''
      : `; this server's admin token is in ${tokenFile}${isAbsolute(tokenFile) ? '' : ' (under the folder it was started in)'}, created at its first start and never printed`;
  return (request) => {
    if (tokens === 'disabled') return { ok: true, principal: OPEN_PRINCIPAL };
    const header = request.authorization;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (header === '') {
      return {
        ok: false,
        refusal: {
          reason: 'NoCredentials',
          detail: `no Authorization header: send "Authorization: Bearer <token>", or sign the request with an API key (${NDA_HMAC_SCHEME})${tokenHint}`,
        },
      };
    } else if (bearer) {
      const principal = tokens.authenticate(bearer[1]!);
      if (principal) return { ok: true, principal };
      return {
        ok: false,
        refusal: { reason: 'UnknownToken', detail: `the bearer token matches no token configured on this server${tokenHint}` },
      };
    } else if (NDA_HMAC_HEADER.test(header)) {
      const check = apiKeys.verify({
        authorization: header,
        date: request.date,
        host: signedHost(request, config),
        method: request.method,
        rawPath: request.rawPath,
        rawQuery: request.rawQuery,
        clientAddress: request.clientAddress,
      });
      if (check.ok) {
        const { verified } = check;
        if (!config.API_KEY_REPLAY_GUARD) return { ok: true, principal: verified.principal };
        return {
          ok: true,
          principal: verified.principal,
          signature: {
            keyId: verified.keyId,
            signature: verified.signature,
            expiresAt: new Date(verified.expiresAt),
            singleWriter: verified.singleWriter,
          },
        };
      }
      const { reason, detail, canonical, why } = check.refusal;
      return {
        ok: false,
        refusal: {
          reason,
          detail,
          ...(why ? { why } : {}),
          ...(canonical
            ? {
                properties: {
                  canonicalHost: canonical.host,
                  canonicalMethod: canonical.method,
                  canonicalPath: canonical.path,
                  canonicalQuery: canonical.query,
                  canonicalDate: canonical.date,
                },
              }
            : {}),
        },
      };
    }
    return {
      ok: false,
      refusal: {
        reason: 'UnsupportedScheme',
        detail: `the Authorization header is neither "Bearer <token>" nor an ${NDA_HMAC_SCHEME} signature`,
      },
    };
  };
}

/**
 * Resolves the request's credentials to a principal on ctx.state: a bearer
 * token, or an NDA-HMAC-SHA256 signature of an API key. Public paths pass
 * without either. A refusal is a 401 that says which check failed, never
 * with a secret (docs/decisions/0050).
 */
export function authenticate(deps: Pick<AppDeps, 'tokens' | 'config' | 'db'>): Middleware {
  const { tokens, config } = deps;
  const check = credentialChecker(tokens, config);
  const throttle = authFailureThrottle(deps);
  const trust = forwardedTrust(config);
  return async function authenticateMiddleware(ctx, next) {
    const checked = check({
      authorization: ctx.get('authorization'),
      date: ctx.get(NDA_DATE_HEADER),
      host: ctx.get('host'),
      forwardedHost: forwardedHeader(ctx.req, 'host', trust),
      method: ctx.method,
      rawPath: ctx.path,
      rawQuery: ctx.querystring,
      clientAddress: clientAddress(ctx),
    });
    if (checked.ok) {
      ctx.state.principal = checked.principal;
      if (checked.signature) ctx.state.signature = checked.signature;
      return next();
    }
    if (PUBLIC_PATHS.some((pattern) => pattern.test(ctx.path))) return next();
    if (checked.refusal.why) ctx.state.log?.info({ reason: checked.refusal.why }, 'signed request refused');
    throw await throttle(ctx, unauthorized(checked.refusal));
  };
}

/**
 * The host name the client signed: PUBLIC_HOST when set, else the Host header
 * (X-Forwarded-Host first when a trusted proxy sent it), without its port.
 */
function signedHost(request: CredentialRequest, config: AuthConfig): string | undefined {
  if (config.PUBLIC_HOST) return config.PUBLIC_HOST;
  const header = request.forwardedHost || request.host;
  // Clients call one or a few names: each is parsed (a WHATWG URL) once, not per request.
  if (!hostnames.has(header)) {
    if (hostnames.size >= HOSTNAMES_KEPT) hostnames.clear();
    hostnames.set(header, hostnameOf(header));
  }
  return hostnames.get(header);
}

const HOSTNAMES_KEPT = 64;
const hostnames = new Map<string, string | undefined>();

function unauthorized(refusal: Refusal) {
  const error = problem(401, 'Unauthorized', refusal.detail, undefined, { reason: refusal.reason, ...refusal.properties });
  // RFC 6750: error="invalid_token" when a bearer token was sent and is not valid.
  const bearer =
    refusal.reason === 'UnknownToken' ? 'Bearer realm="entity-records", error="invalid_token"' : 'Bearer realm="entity-records"';
  error.headers = { 'WWW-Authenticate': `${bearer}, ${NDA_HMAC_SCHEME} realm="entity-records"` };
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

/**
 * What the auth middleware keeps of an HMAC signature on ctx.state.signature,
 * when API_KEY_REPLAY_GUARD is on; api/middleware/signed-writes.ts adds what
 * is done when the signature comes back with another body.
 */
export interface RequestSignature extends Omit<SignedRequest, 'bodySha256'> {
  singleWriter: boolean;
}

/**
 * The request's signature as the replay guard names it, but for the body
 * (services/jobs/submission-guards.ts), for a body hashed as it streams.
 * Undefined for a request that is not HMAC-signed (a bearer token has no
 * signature to replay) or when API_KEY_REPLAY_GUARD is off.
 */
export function signatureOf(ctx: Context): Omit<SignedRequest, 'bodySha256'> | undefined {
  const signature = ctx.state.signature as RequestSignature | undefined;
  if (!signature) return undefined;
  const { keyId, signature: presented, expiresAt, onOtherBody } = signature;
  return { keyId, signature: presented, expiresAt, ...(onOtherBody ? { onOtherBody } : {}) };
}

/** The request as the replay guard names it: its key, signature and body (see signatureOf). */
export function signedRequestOf(ctx: Context, bodySha256: Buffer): SignedRequest | undefined {
  const signature = signatureOf(ctx);
  return signature && { ...signature, bodySha256 };
}
