// What each middleware of Koa's chain (api/app.ts) does to a GET of a current
// record, and how the direct path (entity-get.ts, decision 0078) stands to it:
// `mirrors` when entity-get.ts does the same through the same functions,
// `hands-to-koa` when every request that middleware would act on goes to Koa.
// tools/direct-path-guard.ts (run by npm run lint) fails when app.ts uses a
// middleware this list does not name, or this list names one app.ts no
// longer uses, so a middleware cannot be added without deciding here what
// the direct path does about it.

type Stance = { readonly stance: 'mirrors' | 'hands-to-koa'; readonly how: string };

export const DIRECT_GET_STANCES: Readonly<Record<string, Stance>> = {
  httpTracing: { stance: 'mirrors', how: 'the same server span helpers, under the route pattern' },
  httpMetrics: { stance: 'mirrors', how: 'the same histogram and labels' },
  requestContext: { stance: 'mirrors', how: 'the same request id and log line functions' },
  allowListedCors: { stance: 'hands-to-koa', how: 'a request with an Origin goes to Koa' },
  errorHandler: { stance: 'hands-to-koa', how: 'an answer that is a problem goes to Koa' },
  drainRefusedBodies: { stance: 'hands-to-koa', how: 'a refusal goes to Koa, which reads and drops the rest of its body' },
  resolveClientAddresses: { stance: 'mirrors', how: 'resolveClientAddress with the same trusted proxies' },
  authenticate: { stance: 'mirrors', how: 'the same credential check; failures go to Koa, which throttles' },
  watchSignedWrites: { stance: 'hands-to-koa', how: 'writes only; the direct path serves GET' },
  refuseUnknownQueryParameters: { stance: 'hands-to-koa', how: 'a request with a query goes to Koa' },
  routes: { stance: 'mirrors', how: "the entities router's GET; long-read and anonymous limits are on other routes" },
  allowedMethods: { stance: 'hands-to-koa', how: 'the direct path answers GET only' },
};
