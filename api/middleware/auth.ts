import type { Middleware } from 'koa';
import type { Permission, Principal, TokenRegistry } from '../auth/tokens.ts';
import { problem } from '../problems.ts';

const PUBLIC_PATHS = [/^\/health$/, /^\/metrics$/, /^\/docs(\/.*)?$/, /^\/api\/v[12]\/openapi\.json$/];
const OPEN_PRINCIPAL: Principal = { name: 'anonymous', permissions: new Set(['admin']) };

/** Resolves the bearer token to a principal on ctx.state; public paths pass without one. */
export function authenticate(tokens: TokenRegistry | 'disabled'): Middleware {
  return async function authenticateMiddleware(ctx, next) {
    if (tokens === 'disabled') {
      ctx.state.principal = OPEN_PRINCIPAL;
      return next();
    }
    const header = ctx.get('authorization');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const principal = match ? tokens.authenticate(match[1]!) : undefined;
    if (principal) {
      ctx.state.principal = principal;
      return next();
    }
    if (PUBLIC_PATHS.some((pattern) => pattern.test(ctx.path))) return next();
    const error = problem(401, 'Unauthorized', header ? 'the bearer token is not valid' : 'an Authorization: Bearer <token> header is required');
    error.headers = { 'WWW-Authenticate': `Bearer realm="entity-records"${header ? ', error="invalid_token"' : ''}` };
    throw error;
  };
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
