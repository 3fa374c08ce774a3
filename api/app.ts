import Koa from 'koa';
import type { AppDeps } from './deps.ts';
import { healthRouter } from './health.ts';
import { authenticate } from './middleware/auth.ts';
import { errorHandler } from './middleware/errors.ts';
import { requestContext } from './middleware/request-context.ts';
import { v1Routers } from './v1/routes.ts';
import { batchesRouter } from './v2/batches/routes.ts';
import { entitiesRouter } from './v2/entities/routes.ts';
import { exportsRouter } from './v2/exports/routes.ts';
import { searchRouter } from './v2/search/routes.ts';
import { updatesRouter } from './v2/updates/routes.ts';

/** Builds the HTTP application from its dependencies; listening is the entry point's job. */
export function buildApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  // Errors are rendered by errorHandler; Koa's own default handler would only log them twice.
  app.silent = true;
  app.use(requestContext(deps.log));
  app.use(errorHandler());
  app.use(authenticate(deps.tokens));
  for (const router of [healthRouter(deps), batchesRouter(deps), entitiesRouter(deps), updatesRouter(deps), searchRouter(deps), exportsRouter(deps), ...v1Routers(deps)]) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: true }));
  }
  return app;
}
