import type { Middleware } from 'koa';
import { problem } from './problems.ts';

/**
 * For a fixed path that a parameterised GET route would otherwise take (GET
 * /batches/test would read "test" as a batch id): 405 with the methods the
 * path does serve, as for any other method a path does not serve.
 */
/** The route name of such stubs: they serve nothing, so the route listing (docs, contract test) leaves them out. */
export const REFUSED_METHOD_ROUTE = 'refused-method';

export function methodNotAllowed(...allowed: string[]): Middleware {
  return async function methodNotAllowedMiddleware(ctx) {
    ctx.set('Allow', allowed.join(', '));
    throw problem(405, 'MethodNotAllowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allowed.join(', ')}`);
  };
}
