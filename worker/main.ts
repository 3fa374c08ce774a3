import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from '../config.ts';
import { openOrm } from '../db/orm.ts';
import { createLogger } from '../logger.ts';
import { startWorkerMetrics } from '../metrics/worker.ts';
import { runUntilSignalled } from '../scripts/lib/process.ts';
import { createWorker } from './create-worker.ts';

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'worker');
// The SDK's own logging (workflow bundling, state changes) only matters when it warns.
Runtime.install({ logger: new DefaultLogger('WARN') });
const orm = await openOrm(config.DATABASE_URL);
const connection = await NativeConnection.connect({ address: config.temporalAddress });
const clientConnection = await Connection.connect({ address: config.temporalAddress });
const metrics = config.WORKER_METRICS_PORT === undefined ? undefined : await startWorkerMetrics(config.WORKER_METRICS_PORT, config.HOST);
const worker = await createWorker({
  connection,
  client: new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE }),
  namespace: config.TEMPORAL_NAMESPACE,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  orm,
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
await orm.close();
log.info('worker stopped');
