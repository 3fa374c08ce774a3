// The workflow interceptors of OpenTelemetry tracing (metrics/tracing.ts),
// for a workflow whose start carries a trace context: one started by an API
// with tracing on. The workflow's run is then a span under its start, and
// each activity it schedules a span under the run, passed on in the
// activity's headers. Every bundle holds this module (worker/bundle.ts),
// because it is built before anyone knows whether a worker traces (the
// image, npm start); the choice is read from the workflow's own start, which
// is in its history, so a replay chooses as the first run did
// (docs/decisions/0184-workflow-tracing-chosen-by-its-start.md).
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header the OpenTelemetry interceptors carry a trace context in (their TRACE_HEADER). */
const TRACE_HEADER = '_tracer-data';

/**
 * The OpenTelemetry workflow modules, evaluated in a workflow's sandbox only
 * when it is traced: evaluated for every workflow, they cost a few
 * milliseconds each (and set browser globals the tracer wants). Eager: in the
 * bundle, not a chunk of its own.
 */
const loadOpenTelemetry = () => import(/* webpackMode: "eager" */ '@temporalio/interceptors-opentelemetry/lib/workflow/index.js');

interface Traced {
  inbound: Required<WorkflowInboundCallsInterceptor>;
  outbound: Required<
    Pick<
      WorkflowOutboundCallsInterceptor,
      | 'scheduleActivity'
      | 'scheduleLocalActivity'
      | 'startNexusOperation'
      | 'startChildWorkflowExecution'
      | 'continueAsNew'
      | 'signalWorkflow'
      | 'getLogAttributes'
      | 'getMetricTags'
    >
  >;
  internals: Required<Pick<WorkflowInternalsInterceptor, 'dispose'>>;
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  // Made at the workflow's start when it is traced.
  let traced: Traced | undefined;
  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      // An untraced workflow starts as it would without this module: at once, no await between.
      if (input.headers[TRACE_HEADER] === undefined) return next(input);
      return loadOpenTelemetry().then((openTelemetry) => {
        traced = {
          inbound: new openTelemetry.OpenTelemetryInboundInterceptor(),
          outbound: new openTelemetry.OpenTelemetryOutboundInterceptor(),
          internals: new openTelemetry.OpenTelemetryInternalsInterceptor(),
        };
        return traced.inbound.execute(input, next);
      });
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
  const internals: WorkflowInternalsInterceptor = {
    // Disables the tracer's context manager.
    dispose: (input, next) => (traced ? traced.internals.dispose(input, next) : next(input)),
  };
  return { inbound: [inbound], outbound: [outbound], internals: [internals] };
};
