import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from '../config.ts';
import { openDb } from '../db/index.ts';
import { createLogger } from '../logger.ts';
import { startWorkerMetrics } from '../metrics/worker.ts';
import { runUntilSignalled } from '../scripts/lib/process.ts';
import { createWorker } from './create-worker.ts';
import { startMemoryLog } from './memory-log.ts';

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'worker');
const stopMemoryLog = startMemoryLog(config.WORKER_MEMORY_LOG_MS);
// The SDK's own logging (workflow bundling, state changes) only matters when
// it warns, and then goes to the service's log. An activity-only process (the
// interactive lane) polls no workflow tasks by design: that warning is noise.
const ACTIVITY_ONLY_WARNING = 'No workflows registered, not polling for workflow tasks';
Runtime.install({
  logger: new DefaultLogger('WARN', ({ level, message, meta }) => {
    if (message === ACTIVITY_ONLY_WARNING) return;
    log[level === 'ERROR' ? 'error' : 'warn']({ sdk: meta }, message);
  }),
});
const db = await openDb(config.DATABASE_URL);
const connection = await NativeConnection.connect({ address: config.temporalAddress });
const clientConnection = await Connection.connect({ address: config.temporalAddress });
const metrics = config.WORKER_METRICS_PORT === undefined ? undefined : await startWorkerMetrics(config.WORKER_METRICS_PORT, config.HOST);
const worker = await createWorker({
  connection,
  client: new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }),
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  db,
  log,
  forceKeySecret: config.forceKeySecret,
  // A bundle built beforehand (npm start does) keeps webpack out of the worker's memory.
  workflowBundle: config.WORKFLOW_BUNDLE ? { codePath: config.WORKFLOW_BUNDLE } : undefined,
  exportDir: config.exportDir,
  maxConcurrentActivities: config.WORKER_MAX_CONCURRENT_ACTIVITIES,
  interactiveActivities: config.WORKER_INTERACTIVE_ACTIVITIES,
  lanes: config.WORKER_LANES,
  activityInterceptors: metrics ? [metrics.activityInterceptor] : undefined,
});
log.info({ taskQueues: worker.taskQueues, activitySlots: worker.slots, temporal: config.temporalAddress, metrics: metrics?.url }, 'worker polling');
await runUntilSignalled(() => worker.run(), () => worker.shutdown());
await metrics?.close();
await connection.close();
await clientConnection.close();
await db.close();
stopMemoryLog();
log.info('worker stopped');
