import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadWorkerConfig } from '../config.ts';
import { openDb } from '../db/index.ts';
import { createLogger } from '../logger.ts';
import { startTracing } from '../metrics/tracing.ts';
import { startWorkerMetrics } from '../metrics/worker.ts';
import { runUntilSignalled } from '../platform/signals.ts';
import { temporalConnectionOptions } from '../temporal/client/connection.ts';
import { lazyClientConnection } from '../temporal/client/lazy-connection.ts';
import { makeVersionCurrent, versionName } from '../temporal/client/worker-deployment.ts';
import { loadWorkflowBundle } from './bundle.ts';
import { createWorker, type ServiceWorker } from './create-worker.ts';
import { startMemoryLog } from './memory-log.ts';
import { installTemporalRuntime } from './runtime.ts';

const config = loadWorkerConfig();
const log = createLogger(config.LOG_LEVEL, 'worker');
const stopMemoryLog = startMemoryLog(config.WORKER_MEMORY_LOG_MS);
const runtime = await installTemporalRuntime(config, log);
const db = await openDb(config.DATABASE_URL);
const tracing = await startTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'entity-records-worker');
const metrics =
  config.WORKER_METRICS_PORT === undefined
    ? undefined
    : await startWorkerMetrics(config.WORKER_METRICS_PORT, config.HOST, runtime.metricsUrl);
const connectionOptions = { address: config.temporalAddress, ...temporalConnectionOptions(config) };
// The activities' own client (see WorkerDeps.client): lazy, so that it never stands in the way of a start.
const clientConnection = lazyClientConnection(config);
const client = new Client({ connection: clientConnection.connection, namespace: config.TEMPORAL_NAMESPACE });
// Versioned, the build id is the bundle's hash: a worker without a prebuilt one bundles here, before it connects.
const workflows = config.WORKER_VERSIONING ? await loadWorkflowBundle(config.WORKFLOW_BUNDLE) : undefined;
const deployment = workflows && { deploymentName: config.WORKER_DEPLOYMENT_NAME, buildId: config.WORKER_BUILD_ID ?? workflows.buildId };
let versionSettling = false;

/** Between two tries to reach Temporal, or to run the worker again after it failed. */
const RETRY_MS = 5_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let stopping = false;
let current: ServiceWorker | undefined;

/**
 * Runs the worker until it is asked to stop. A worker never exits because
 * Temporal is away: it tries to connect until Temporal answers, and a worker
 * that fails while running (its server gone for long, or back without its
 * state) is created again on a fresh connection.
 */
async function runForever(): Promise<void> {
  for (let round = 1; !stopping; round += 1) {
    let connection: NativeConnection | undefined;
    try {
      connection = await NativeConnection.connect(connectionOptions);
      current = await createWorker({
        connection,
        client,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        db,
        log,
        forceKeySecret: config.forceKeySecret,
        // A bundle built beforehand (npm start and the image do) keeps webpack out of the worker's memory.
        workflowBundle: workflows?.bundle ?? (config.WORKFLOW_BUNDLE ? { codePath: config.WORKFLOW_BUNDLE } : undefined),
        deployment,
        exportDir: config.exportDir,
        maxConcurrentActivities: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
        interactiveActivities: config.WORKER_INTERACTIVE_ACTIVITIES,
        exportActivities: config.WORKER_EXPORT_ACTIVITIES,
        lanes: config.WORKER_LANES,
        shutdownGraceMs: config.WORKER_SHUTDOWN_GRACE_SECONDS * 1000,
        bodyRetentionDays: config.BATCH_BODY_RETENTION_DAYS,
        analyzeAfterRecords: config.ANALYZE_AFTER_RECORDS,
        activityInterceptors: [...(metrics ? [metrics.activityInterceptor] : []), ...(tracing ? [tracing.activityInterceptor] : [])],
        workflowSinks: tracing?.workflowSinks,
      });
      if (stopping) return;
      log.info(
        {
          taskQueues: current.taskQueues,
          activitySlots: current.slots,
          version: deployment && versionName(deployment),
          temporal: config.temporalAddress,
          metrics: metrics?.url,
        },
        'worker polling',
      );
      const running = current.run();
      if (deployment && !versionSettling) settleVersion(deployment);
      await running;
    } catch (error) {
      if (stopping) return;
      log.error({ err: error, round, temporal: config.temporalAddress }, `worker could not run; trying again in ${RETRY_MS / 1000} s`);
      await sleep(RETRY_MS);
    } finally {
      current = undefined;
      await connection?.close().catch(() => undefined);
    }
  }
}

/** Between two looks whether the deployment still has a current version (see settleVersion). */
const VERSION_CHECK_MS = 30_000;

/**
 * Once per process, beside the polls that register the version: makes it
 * current as WORKER_VERSION_CURRENT says (docs/deployment.md, Workers),
 * trying again while Temporal does not answer. Then, every VERSION_CHECK_MS,
 * makes it current again if the deployment has none: a Temporal that lost
 * its state forgets its deployments, and new workflows would wait for a
 * current version with no one to set it.
 */
function settleVersion(version: { deploymentName: string; buildId: string }, policy = config.WORKER_VERSION_CURRENT, first = true): void {
  versionSettling = true;
  const again = (next: typeof policy, ms: number, nextFirst: boolean) => {
    if (next !== 'never') setTimeout(() => !stopping && settleVersion(version, next, nextFirst), ms).unref();
  };
  makeVersionCurrent(client, version, policy, () => stopping).then(
    (outcome) => {
      if (first || outcome === 'made current') log.info({ version: versionName(version), policy, outcome }, 'worker deployment version');
      again(policy === 'never' ? 'never' : 'if-none', VERSION_CHECK_MS, false);
    },
    (error: unknown) => {
      log.warn(
        { err: error, version: versionName(version) },
        `could not make the worker deployment version current; trying again in ${RETRY_MS / 1000} s`,
      );
      again(policy, RETRY_MS, first);
    },
  );
}

await runUntilSignalled(runForever, () => {
  stopping = true;
  log.info(
    { activitiesInFlight: current?.activitiesInFlight() ?? 0, graceSeconds: config.WORKER_SHUTDOWN_GRACE_SECONDS },
    'worker stopping: no new tasks; running activities may finish',
  );
  current?.shutdown();
});
await metrics?.close();
await tracing?.shutdown();
await clientConnection.close();
await db.close();
stopMemoryLog();
log.info('worker stopped');
