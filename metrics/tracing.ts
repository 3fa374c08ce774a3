import type { Tracer } from '@opentelemetry/api';
import type { OpenTelemetryWorkflowClientInterceptor, OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';

// OpenTelemetry tracing, off unless the operator names a collector
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTLP over HTTP). An API request is a server
// span; a workflow start made inside it, the workflow's run, the activities
// it schedules and their executions are its descendants, linked through
// Temporal's headers; all go to that collector in batches. Nothing is traced
// otherwise. The SDK is imported only when tracing is on: loaded, its modules
// hold about 25 MB in every API and worker process.

/** The sink the workflow interceptors (workflows/tracing.ts) hand their spans to, from inside the workflow sandbox. */
export type WorkflowTracingSinks = InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }>;

export interface Tracing {
  tracer: Tracer;
  /** The client interceptor: workflow starts and queries become spans whose context travels in the workflow's headers. */
  clientInterceptor: OpenTelemetryWorkflowClientInterceptor;
  /** The activity interceptors: every activity execution a span, a child of the workflow's scheduling of it. */
  activityInterceptor: ActivityInterceptorsFactory;
  /** The workflow spans' way out of the sandbox to this process's collector. */
  workflowSinks: WorkflowTracingSinks;
  /** Sends what is left and stops. */
  shutdown(): Promise<void>;
}

/**
 * For a worker without tracing: a workflow started by a tracing API still
 * makes its spans (the choice is in its history, workflows/tracing.ts), and
 * they are dropped here rather than logged as calls to a missing sink.
 */
export const UNTRACED_WORKFLOW_SINKS: WorkflowTracingSinks = { exporter: { export: { fn: () => undefined } } };

/** Tracing to `endpoint` as `serviceName`, or undefined when no endpoint is configured. */
export async function startTracing(endpoint: string | undefined, serviceName: string): Promise<Tracing | undefined> {
  if (!endpoint) return undefined;
  const [
    { AsyncLocalStorageContextManager },
    { OTLPTraceExporter },
    { Resource },
    { BasicTracerProvider, BatchSpanProcessor },
    temporalTracing,
  ] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  const {
    makeWorkflowExporter,
    OpenTelemetryActivityInboundInterceptor,
    OpenTelemetryActivityOutboundInterceptor,
    OpenTelemetryWorkflowClientInterceptor,
  } = temporalTracing;
  const resource = new Resource({ 'service.name': serviceName });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/$/, '')}/v1/traces` }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  // The context manager carries the active span across awaits: a request's span to the workflow start it makes, an activity's to its work.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  const tracer = provider.getTracer(serviceName);
  return {
    tracer,
    clientInterceptor: new OpenTelemetryWorkflowClientInterceptor({ tracer }),
    activityInterceptor: (context) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(context, { tracer }),
      outbound: new OpenTelemetryActivityOutboundInterceptor(context),
    }),
    workflowSinks: { exporter: makeWorkflowExporter(processor, resource) },
    shutdown: () => provider.shutdown(),
  };
}
