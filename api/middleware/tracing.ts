import type { IncomingHttpHeaders } from 'node:http';
import type Router from '@koa/router';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import { routeOf } from './metrics.ts';

// With tracing on (metrics/tracing.ts) every request is a server span, named
// and labelled by its route pattern like the duration metric. The span is
// the active context while the request is served, so a workflow start made
// inside it (the client interceptor) is its child. Without tracing the
// middleware is not installed at all.

/** A request's server span; a child of the caller's trace when it sent a traceparent header. */
export function startServerSpan(tracer: Tracer, method: string, headers: IncomingHttpHeaders, startTime?: number): Span {
  return tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, startTime, attributes: { 'http.request.method': method } },
    propagation.extract(ROOT_CONTEXT, headers),
  );
}

/** Ends the span as answered: named `METHOD route`, with the status; a 5xx is an error. */
export function endServerSpan(span: Span, method: string, route: string, status: number): void {
  span.updateName(`${method} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

export function httpTracing(tracer: Tracer, routers: readonly Router[]): Middleware {
  return async function httpTracingMiddleware(ctx, next) {
    const span = startServerSpan(tracer, ctx.method, ctx.headers);
    // Ended when the response is sent (or the client went away), with the status the error handler settled on.
    ctx.res.once('close', () => endServerSpan(span, ctx.method, routeOf(ctx, routers), ctx.status));
    await context.with(trace.setSpan(context.active(), span), next);
  };
}
