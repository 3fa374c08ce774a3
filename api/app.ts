import type { Server } from 'node:http';
import Koa from 'koa';
import { createApiMetrics } from '../metrics/api.ts';
import { trustedProxyList } from './client-address.ts';
import { resolveClientAddresses } from './middleware/client-address.ts';
import type { AppDeps } from './deps.ts';
import { docsRouter } from './docs/routes.ts';
import { healthRouter } from './health.ts';
import { metricsRouter, metricsToken } from './metrics.ts';
import { recordPagesRouter } from './pages/routes.ts';
import { authenticate } from './middleware/auth.ts';
import { allowListedCors } from './middleware/cors.ts';
import { errorHandler } from './middleware/errors.ts';
import { httpMetrics } from './middleware/metrics.ts';
import { requestContext } from './middleware/request-context.ts';
import { watchSignedWrites } from './middleware/signed-writes.ts';
import { refuseUnknownQueryParameters } from './middleware/strict-query.ts';
import { httpTracing } from './middleware/tracing.ts';
import { oaiRouter } from './oai/routes.ts';
import { activityStreamRouter } from './activity-stream/routes.ts';
import { acceptProxyProtocol } from './proxy-protocol.ts';
import { drainRefusedBodies, honourExpectContinue } from './readable-refusals.ts';
import { entitiesRouter } from './reads/entities.ts';
import { withDirectEntityGet } from './reads/entity-get.ts';
import { searchRouter } from './reads/search.ts';
import { updatesRouter } from './reads/updates.ts';
import { v1Routers } from './v1/routes.ts';
import { batchesRouter } from './v2/batches/routes.ts';
import { exportsRouter } from './v2/exports/routes.ts';
import { streamRouter } from './v2/stream/routes.ts';

/** Builds the HTTP application from its dependencies; listening is the entry point's job. */
export function buildApp(deps: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  // Errors are rendered by errorHandler; Koa's own default handler would only log them twice.
  app.silent = true;
  const metrics = createApiMetrics(deps);
  // The hottest route first: a request passes every router before the one that serves it.
  const routers = [
    entitiesRouter(deps, 'v2'),
    healthRouter(deps),
    metricsRouter(deps.metricsSource?.(metrics.registry) ?? metrics.registry, metricsToken(deps.config)),
    docsRouter(deps),
    recordPagesRouter(deps),
    batchesRouter(deps),
    updatesRouter(deps, 'v2'),
    searchRouter(deps, 'v2'),
    exportsRouter(deps),
    streamRouter(deps),
    ...v1Routers(deps),
  ];
  // OAI_PMH=off serves no /oai at all: a 404 like any unknown path.
  // The Activity Streams feed serves the same harvesters, by the same setting.
  if (deps.config.OAI_PMH !== 'off') routers.push(oaiRouter(deps), activityStreamRouter(deps));
  // First, so they see everything and the status the error handler settled on; the span is the context of all the rest.
  if (deps.tracer) app.use(httpTracing(deps.tracer, routers));
  app.use(httpMetrics(metrics.httpRequestDuration, routers));
  app.use(requestContext(deps.log));
  // Before authentication: a browser's preflight carries no token. Outside errorHandler, so problems keep its headers.
  app.use(allowListedCors(deps.config.CORS_ORIGINS));
  // Outside errorHandler: it sees the refusal errorHandler settled on.
  app.use(drainRefusedBodies(deps.config));
  app.use(errorHandler());
  const trustedProxies = trustedProxyList(deps.config);
  app.use(resolveClientAddresses(trustedProxies));
  app.use(authenticate(deps));
  app.use(watchSignedWrites(metrics.registry));
  app.use(refuseUnknownQueryParameters());
  for (const router of routers) {
    app.use(router.routes());
    // Without throw the router sets the Allow header; errorHandler turns its bare 405/501 into a problem.
    app.use(router.allowedMethods());
  }
  // The GET of a current record, where it needs nothing of Koa, is answered before it (api/reads/entity-get.ts):
  // what a middleware above does to that GET, entity-get.ts must do too, and api/reads/direct-get-mirrors.ts says how
  // (npm run lint fails on a middleware it does not name; test/integration/entity-get-direct.test.ts compares the two
  // answers header for header).
  if (deps.config.API_DIRECT_ENTITY_GET) {
    const koaCallback = app.callback.bind(app);
    app.callback = () => withDirectEntityGet(deps, metrics.httpRequestDuration, koaCallback());
  }
  // Every server app.listen makes sends 100 Continue only to a request whose body is read (api/readable-refusals.ts).
  const listenHonouringExpect = app.listen.bind(app) as (...args: unknown[]) => Server;
  app.listen = ((...args: unknown[]) => honourExpectContinue(listenHonouringExpect(...args))) as Koa['listen'];
  // PROXY_PROTOCOL: the server app.listen makes reads each connection's PROXY header before HTTP does (api/proxy-protocol.ts);
  // off, app.listen is Koa's own and no connection passes through anything more.
  if (deps.config.PROXY_PROTOCOL) {
    const listen = app.listen.bind(app) as (...args: unknown[]) => Server;
    const refused = metrics.proxyProtocolRefused!;
    app.listen = ((...args: unknown[]) =>
      acceptProxyProtocol(listen(...args), {
        trustedProxies: trustedProxies!,
        log: deps.log,
        refused: (reason) => refused.inc({ reason }),
      })) as Koa['listen'];
  }
  return app;
}
