import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { NativeConnection, Worker, type ActivityInterceptorsFactory, type WorkerOptions } from '@temporalio/worker';
import { createBatchActivities, type BatchActivityDeps } from '../activities/batches.ts';
import { createExportActivities, type ExportActivityDeps } from '../activities/exports.ts';
import { checkAttemptWith, HEARTBEAT_EVERY_MS } from '../activities/job-control.ts';
import type { Db } from '../db/index.ts';
import type { Logger } from '../logger.ts';
import { UNTRACED_WORKFLOW_SINKS, type WorkflowTracingSinks } from '../metrics/tracing.ts';
import { laneTaskQueue, type Lane } from '../temporal/names.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/** Bundled with the workflows, whether or not this worker traces (workflows/tracing.ts says why). */
export const WORKFLOW_INTERCEPTOR_MODULES = [fileURLToPath(new URL('../workflows/tracing.ts', import.meta.url))];

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
  db: Db;
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
  /** Where traced workflows' spans go (metrics/tracing.ts); default: dropped. */
  workflowSinks?: WorkflowTracingSinks;
  /** Bulk activities run at once (WORKER_MAX_CONCURRENT_ACTIVITIES), bounded again by the ORM pool. */
  maxConcurrentActivities?: number;
  /** Exports written at once, in the export lane (WORKER_EXPORT_ACTIVITIES); the lane is polled with bulk. */
  exportActivities?: number;
  /** Small batches' activities run at once, in the interactive lane (WORKER_INTERACTIVE_ACTIVITIES). */
  interactiveActivities?: number;
  /** The lanes this process polls (WORKER_LANES); default both. */
  lanes?: readonly Lane[];
  /** How long a batch's body is kept after it ended (BATCH_BODY_RETENTION_DAYS). */
  bodyRetentionDays?: number;
  /** A batch that wrote at least this many records is followed by ANALYZE of its tables (ANALYZE_AFTER_RECORDS). */
  analyzeAfterRecords?: number;
  /** How long shutdown() lets running activities finish (WORKER_SHUTDOWN_GRACE_SECONDS); default none: cancelled at once. */
  shutdownGraceMs?: number;
  /** A pre-built workflow bundle (tests build one per run); otherwise the worker bundles WORKFLOWS_PATH. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * The worker deployment version every lane declares (WORKER_VERSIONING):
   * workflows are pinned to the version that started them, the expiry
   * workflow excepted (workflows/expiry.ts). Unset: an unversioned worker.
   */
  deployment?: WorkerDeploymentVersion;
}

/**
 * Pooled connections one activity may hold at once: a batch's transaction or
 * an export's cursor, plus one short statement beside it (the progress
 * update, a chunk of the stored body, a group's name words).
 */
const CONNECTIONS_PER_ACTIVITY = 2;

/**
 * Activities run at once, both lanes together: no more than the ORM pool can
 * serve whole. With more, every connection can end up held by a transaction
 * waiting for a second one for its progress update, and the worker hangs for good.
 */
function maxConcurrentActivities(db: Db): number {
  return Math.max(1, Math.floor((db.orm.config.get('pool').max ?? 10) / CONNECTIONS_PER_ACTIVITY));
}

export interface ActivitySlots {
  bulk: number;
  interactive: number;
  export: number;
}

/**
 * The slots of each lane within what the pool serves (`total`). The export
 * lane goes with bulk: a process polling bulk polls it too. The interactive
 * lane keeps what it asks for, up to all but one slot for each other lane
 * polled; the export lane next, leaving bulk one; bulk gets at most the rest;
 * each lane polled has at least one slot. A lane this process does not poll
 * gets none, and the others may use the whole pool.
 */
export function activitySlots(
  total: number,
  wanted: { bulk?: number; interactive?: number; export?: number },
  lanes: readonly Lane[] = ['bulk', 'interactive'],
): ActivitySlots {
  const polls = (lane: Lane) => lanes.includes(lane) || (lane === 'export' && lanes.includes('bulk'));
  const others = (polls('bulk') ? 1 : 0) + (polls('export') ? 1 : 0);
  const interactive = polls('interactive') ? Math.max(1, Math.min(wanted.interactive ?? 1, total - others)) : 0;
  const exports = polls('export') ? Math.max(1, Math.min(wanted.export ?? 1, total - interactive - (polls('bulk') ? 1 : 0))) : 0;
  const bulk = polls('bulk') ? Math.max(1, Math.min(wanted.bulk ?? Number.POSITIVE_INFINITY, total - interactive - exports)) : 0;
  return { bulk, interactive, export: exports };
}

/**
 * The worker of one process: one SDK Worker per lane it polls, on one
 * connection. The bulk one polls the deployment's task queue (every workflow,
 * large batches' applies); the export one, beside it, the exports' activities;
 * the interactive one polls its own queue for small batches' activities only,
 * each with slots of its own. `npm start` runs
 * the two lanes in two processes, so that a save's apply never waits for the
 * event loop an import's parsing keeps busy.
 */
export interface ServiceWorker {
  /** The task queue of each lane this process polls. */
  readonly taskQueues: Partial<Record<Lane, string>>;
  readonly slots: ActivitySlots;
  /** Runs both until shutdown; when one fails, the other is shut down and the failure is thrown. */
  run(): Promise<void>;
  shutdown(): void;
  /** Activities running now in either lane. */
  activitiesInFlight(): number;
}

export async function createWorker(deps: WorkerDeps): Promise<ServiceWorker> {
  const lanes = deps.lanes ?? ['bulk', 'interactive'];
  const checkAttempt = checkAttemptWith(deps.client);
  const workflowSource = deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: WORKFLOWS_PATH };
  const slots = activitySlots(
    maxConcurrentActivities(deps.db),
    { bulk: deps.maxConcurrentActivities, interactive: deps.interactiveActivities, export: deps.exportActivities },
    lanes,
  );
  const batchActivities = createBatchActivities({
    db: deps.db,
    log: deps.log,
    forceKeySecret: deps.forceKeySecret,
    checkAttempt,
    afterWriteStep: deps.afterWriteStep,
    bodyRetentionDays: deps.bodyRetentionDays,
    analyzeAfterRecords: deps.analyzeAfterRecords,
  });
  const shared = {
    connection: deps.connection,
    namespace: deps.namespace,
    // Heartbeats reach the server once a second (not every 0.8 × heartbeat
    // timeout): an activity learns of a cancel, or that its workflow is gone,
    // within about a second.
    maxHeartbeatThrottleInterval: HEARTBEAT_EVERY_MS,
    interceptors: { activity: deps.activityInterceptors ?? [] },
    // A deploy's SIGTERM stops polling at once and lets a running apply
    // commit, instead of rolling back work of up to many minutes.
    shutdownGraceTime: deps.shutdownGraceMs ?? 0,
    // The activity-only lanes declare the version too: a pinned workflow's activities then run on its own release's workers.
    ...(deps.deployment
      ? {
          workerDeploymentOptions: {
            useWorkerVersioning: true as const,
            version: deps.deployment,
            defaultVersioningBehavior: 'PINNED' as const,
          },
        }
      : {}),
  };
  const workers: Worker[] = [];
  const taskQueues: Partial<Record<Lane, string>> = {};
  /** One worker on `lane`'s task queue, with the lane's activity slots. */
  const startLane = async (
    lane: Lane,
    options: Pick<WorkerOptions, 'activities' | 'workflowsPath' | 'workflowBundle' | 'interceptors' | 'sinks'>,
  ) => {
    taskQueues[lane] = laneTaskQueue(deps.taskQueue, lane);
    workers.push(
      await Worker.create({ ...shared, taskQueue: taskQueues[lane], maxConcurrentActivityTaskExecutions: slots[lane], ...options }),
    );
  };
  if (lanes.includes('bulk')) {
    const exportActivities = createExportActivities({
      db: deps.db,
      log: deps.log,
      exportDir: deps.exportDir,
      checkAttempt,
      exportRecordsPerStep: deps.exportRecordsPerStep,
      afterExportStep: deps.afterExportStep,
    });
    // Bulk keeps the export activities for export runs started before the export lane existed.
    await startLane('bulk', {
      ...workflowSource,
      // A bundle built beforehand holds the workflow interceptors already (worker/bundle.ts); they are named only for a worker that bundles.
      interceptors: { ...shared.interceptors, ...(deps.workflowBundle ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }) },
      sinks: deps.workflowSinks ?? UNTRACED_WORKFLOW_SINKS,
      activities: { ...batchActivities, ...exportActivities },
    });
    await startLane('export', { activities: exportActivities });
  }
  // Activities only: no workflow code, so no second workflow sandbox in memory.
  if (lanes.includes('interactive')) await startLane('interactive', { activities: batchActivities });
  return {
    taskQueues,
    slots,
    async run() {
      const runs = workers.map(async (worker) => {
        try {
          await worker.run();
        } finally {
          for (const other of workers) if (other.getState() === 'RUNNING') other.shutdown();
        }
      });
      const failure = (await Promise.allSettled(runs)).find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      if (failure) throw failure.reason;
    },
    shutdown() {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    },
    activitiesInFlight() {
      return workers.reduce((sum, worker) => sum + worker.getStatus().numInFlightActivities, 0);
    },
  };
}
