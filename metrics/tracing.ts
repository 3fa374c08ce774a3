import { trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

// OpenTelemetry tracing, off unless the operator names a collector
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTLP over HTTP). Spans of the API's workflow
// starts and of the worker's activities, linked through Temporal's headers,
// go to that collector in batches; nothing is traced otherwise.

export interface Tracing {
  tracer: Tracer;
  /** The client interceptor: workflow starts and queries become spans whose context travels in the workflow's headers. */
  clientInterceptor: OpenTelemetryWorkflowClientInterceptor;
  /** The activity interceptors: every activity execution a span, a child of its workflow's start. */
  activityInterceptor: ActivityInterceptorsFactory;
  /** Sends what is left and stops. */
  shutdown(): Promise<void>;
}

/** Tracing to `endpoint` as `serviceName`, or undefined when no endpoint is configured. */
export function startTracing(endpoint: string | undefined, serviceName: string): Tracing | undefined {
  if (!endpoint) return undefined;
  const provider = new BasicTracerProvider({
    resource: new Resource({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` }))],
  });
  provider.register();
  const tracer = trace.getTracer(serviceName);
  return {
    tracer,
    clientInterceptor: new OpenTelemetryWorkflowClientInterceptor({ tracer }),
    activityInterceptor: (context) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(context, { tracer }), outbound: new OpenTelemetryActivityOutboundInterceptor(context) }),
    shutdown: () => provider.shutdown(),
  };
}
