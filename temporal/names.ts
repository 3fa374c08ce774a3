// Names shared by the workflows, the worker and the API. Pure constants only:
// workflow code imports this module, so it must stay free of Node built-ins.
// Workflow IDs are the batch ID and the export ID themselves.

export const WORKFLOW_TYPES = {
  batch: 'batchWorkflow',
  export: 'exportWorkflow',
  expiry: 'expiryWorkflow',
} as const;

export const QUERIES = {
  batchPhase: 'batchPhase',
} as const;

/**
 * Heartbeat timeout of the batch and export activities. They heartbeat every
 * second (activities/job-control.ts), so this only bounds how long a dead
 * worker holds a job: its attempt is retried elsewhere after this.
 */
export const JOB_HEARTBEAT_TIMEOUT = '15 seconds';

/**
 * The lanes of work. Bulk is the deployment's task queue (TEMPORAL_TASK_QUEUE):
 * every workflow and the applies of large batches. Interactive is a task
 * queue of its own for the activities of small batches, polled by every
 * worker with slots of its own, so a save never waits for a slot that an
 * import holds for minutes. Export is the task queue of the export
 * activities, polled with its own slots by every worker that polls bulk, so
 * a reader's exports never hold an import's slot (docs/decisions/0150).
 */
export type Lane = 'bulk' | 'interactive' | 'export';

/** The task queue of `lane`, given the deployment's task queue: the one place that names task queues. */
export function laneTaskQueue(taskQueue: string, lane: Lane): string {
  return lane === 'bulk' ? taskQueue : `${taskQueue}-${lane}`;
}

/** The patch of export workflows whose activities run in the export lane (runs started before it keep the bulk lane). */
export const EXPORT_LANE_PATCH = 'export-lane';

/** The expiry schedule's id: one per task queue, so deployments sharing a namespace keep theirs apart. */
export function expiryScheduleId(taskQueue: string): string {
  return `${taskQueue}-expiry`;
}
