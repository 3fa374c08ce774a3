import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, type ActivityInterceptorsFactory, type WorkerOptions } from '@temporalio/worker';
import { createBatchActivities, type BatchActivityDeps } from '../activities/batches.ts';
import { createExportActivities, type ExportActivityDeps } from '../activities/exports.ts';
import { checkAttemptWith, HEARTBEAT_EVERY_MS } from '../activities/job-control.ts';
import type { Orm } from '../db/orm.ts';
import type { Logger } from '../logger.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface WorkerDeps {
  connection: NativeConnection;
  /**
   * A client on a connection of its own, through which an activity asks about
   * its workflow. Not the activity context's client: calls on that one are
   * aborted with the activity, when the answer matters most.
   */
  client: Client;
  namespace: string;
  taskQueue: string;
  orm: Orm;
  log: Logger;
  forceKeySecret: string;
  /** Test seam, see BatchActivityDeps. */
  afterWriteStep?: BatchActivityDeps['afterWriteStep'];
  /** The export store's directory (config.exportDir). */
  exportDir: string;
  /** Test seams, see ExportActivityDeps. */
  exportRecordsPerStep?: ExportActivityDeps['exportRecordsPerStep'];
  afterExportStep?: ExportActivityDeps['afterExportStep'];
  /** Activity interceptors, e.g. the metrics one when WORKER_METRICS_PORT is set. */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** Activities run at once (WORKER_MAX_CONCURRENT_ACTIVITIES), bounded again by the ORM pool. */
  maxConcurrentActivities?: number;
  /** A pre-built workflow bundle (tests build one per run); otherwise the worker bundles WORKFLOWS_PATH. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/**
 * Pooled connections one activity may hold at once: a batch's transaction or
 * an export's cursor, plus one short statement beside it (the progress
 * update, a chunk of the stored body, a group's name words).
 */
const CONNECTIONS_PER_ACTIVITY = 2;

/**
 * Activities run at once: no more than the ORM pool can serve whole. With
 * more, every connection can end up held by a transaction waiting for a
 * second one for its progress update, and the worker hangs for good.
 */
export function maxConcurrentActivities(orm: Orm): number {
  return Math.max(1, Math.floor((orm.config.get('pool').max ?? 10) / CONNECTIONS_PER_ACTIVITY));
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const checkAttempt = checkAttemptWith(deps.client);
  const workflowSource = deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: WORKFLOWS_PATH };
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...workflowSource,
    maxConcurrentActivityTaskExecutions: Math.min(maxConcurrentActivities(deps.orm), deps.maxConcurrentActivities ?? Number.POSITIVE_INFINITY),
    // Heartbeats reach the server once a second (not every 0.8 × heartbeat
    // timeout): an activity learns of a cancel, or that its workflow is gone,
    // within about a second.
    maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
    interceptors: { activity: deps.activityInterceptors ?? [] },
    activities: {
      ...createBatchActivities({ orm: deps.orm, log: deps.log, forceKeySecret: deps.forceKeySecret, checkAttempt, afterWriteStep: deps.afterWriteStep }),
      ...createExportActivities({
        orm: deps.orm,
        log: deps.log,
        exportDir: deps.exportDir,
        checkAttempt,
        exportRecordsPerStep: deps.exportRecordsPerStep,
        afterExportStep: deps.afterExportStep,
      }),
    },
  });
}
