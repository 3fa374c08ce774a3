// The workflow interceptors of OpenTelemetry tracing (metrics/tracing.ts),
// for a workflow whose start carries a trace context: one started by an API
// with tracing on. The workflow's run is then a span under its start, and
// each activity it schedules a span under the run, passed on in the
// activity's headers. Every bundle holds this module (worker/bundle.ts),
// because it is built before anyone knows whether a worker traces (the
// image, npm start); the choice is read from the workflow's own start, which
// is in its history, so a replay chooses as the first run did; a workflow
// nobody traced makes no spans, adds no headers and calls no sink.
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import { OpenTelemetryInboundInterceptor, OpenTelemetryInternalsInterceptor, OpenTelemetryOutboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type { WorkflowInboundCallsInterceptor, WorkflowInterceptorsFactory, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';

export const interceptors: WorkflowInterceptorsFactory = () => {
  // Made at the workflow's start when it is traced; the OpenTelemetry interceptors set up their tracer when made.
  let traced: { inbound: OpenTelemetryInboundInterceptor; outbound: OpenTelemetryOutboundInterceptor } | undefined;
  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (input.headers[TRACE_HEADER] !== undefined) traced = { inbound: new OpenTelemetryInboundInterceptor(), outbound: new OpenTelemetryOutboundInterceptor() };
      return traced ? traced.inbound.execute(input, next) : next(input);
    },
    handleSignal: (input, next) => (traced ? traced.inbound.handleSignal(input, next) : next(input)),
    handleUpdate: (input, next) => (traced ? traced.inbound.handleUpdate(input, next) : next(input)),
    validateUpdate: (input, next) => (traced ? traced.inbound.validateUpdate(input, next) : next(input)),
    handleQuery: (input, next) => (traced ? traced.inbound.handleQuery(input, next) : next(input)),
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (traced ? traced.outbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) => (traced ? traced.outbound.scheduleLocalActivity(input, next) : next(input)),
    startNexusOperation: (input, next) => (traced ? traced.outbound.startNexusOperation(input, next) : next(input)),
    startChildWorkflowExecution: (input, next) => (traced ? traced.outbound.startChildWorkflowExecution(input, next) : next(input)),
    continueAsNew: (input, next) => (traced ? traced.outbound.continueAsNew(input, next) : next(input)),
    signalWorkflow: (input, next) => (traced ? traced.outbound.signalWorkflow(input, next) : next(input)),
    getLogAttributes: (input, next) => (traced ? traced.outbound.getLogAttributes(input, next) : next(input)),
    getMetricTags: (input, next) => (traced ? traced.outbound.getMetricTags(input, next) : next(input)),
  };
  // Disables the context manager where one was made; nothing otherwise.
  return { inbound: [inbound], outbound: [outbound], internals: [new OpenTelemetryInternalsInterceptor()] };
};
