import type Router from '@koa/router';
import type Koa from 'koa';

export interface ServedRoute {
  method: string;
  /** The router's path with `:name` parameters written as OpenAPI's `{name}`. */
  path: string;
  params: string[];
}

/**
 * Every method and path the app's routers serve, read from the routers
 * mounted with `router.routes()` (which carries its router). HEAD, which the
 * router adds to every GET, is left out.
 */
export function listRoutes(app: Koa): ServedRoute[] {
  const routes: ServedRoute[] = [];
  for (const middleware of app.middleware) {
    const router = (middleware as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') continue;
      const params = layer.paramNames.map((key) => String((key as { name: string | number }).name));
      const path = layer.path.replace(/:(\w+)/g, '{$1}');
      for (const method of layer.methods) {
        if (method !== 'HEAD') routes.push({ method, path, params });
      }
    }
  }
  return routes;
}
