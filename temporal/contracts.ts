// What the workflows, the activities, the worker and the API agree on: the
// workflows' inputs and outcomes, the activities' signatures, and what the
// activities heartbeat. Types and nothing else, so that workflow code (which
// imports this module) stays free of Node built-ins, and the API reads a
// heartbeat or starts a workflow without importing activity or workflow code.
import type { Lane } from './names.ts';

export interface BatchWorkflowInput {
  batchId: string;
  /**
   * Where its activities run, chosen from its size when it was submitted
   * (services/batches/workflow.ts). Absent in runs started before lanes
   * existed: bulk, the workflow's own task queue, as then.
   */
  lane?: Lane;
  /**
   * The apply's whole time in milliseconds, from its first scheduling to its
   * last attempt's end, queueing behind other imports included
   * (BATCH_APPLY_TIMEOUT_HOURS when it was started). Absent in runs started
   * before it existed: bounded by the attempts alone.
   */
  applyTimeoutMs?: number;
}

export interface BatchWorkflowOutcome {
  batchId: string;
  status: 'COMPLETED' | 'FAILED';
}

export interface ExportWorkflowInput {
  exportId: string;
  /** How long the finished file is kept (config EXPORT_RETENTION_HOURS, fixed when the export is requested). */
  retentionMs: number;
}

export interface ExportWorkflowOutcome {
  exportId: string;
  status: 'COMPLETED' | 'FAILED' | 'EXPIRED';
  entitiesWritten?: number;
}

export type BatchOutcomeStatus = 'COMPLETED' | 'FAILED';

/** What the batch activity heartbeats: where it is, and the share of changes written (0..1). */
export interface BatchHeartbeat {
  phase: 'read' | 'plan' | 'write' | 'commit';
  done: number;
}

export interface BatchActivities {
  /** Applies a stored batch in one transaction; at-least-once safe (activities/batches.ts). */
  applyBatch(batchId: string): Promise<BatchOutcomeStatus>;
  /** Records a batch as FAILED when applying it failed for good. */
  markBatchFailed(batchId: string, reason: string): Promise<void>;
  /** Removes the stored bodies of batches ended longer ago than BATCH_BODY_RETENTION_DAYS; returns how many. */
  removeExpiredBatchBodies(): Promise<number>;
}

export type ExportOutcome =
  { status: 'COMPLETED'; entitiesWritten: number; bytes: number; sha256: string; expiresAt: string } | { status: 'FAILED' | 'EXPIRED' };

/** What the export activity heartbeats: what the file holds so far. */
export interface ExportHeartbeat {
  phase: 'write' | 'publish';
  entitiesWritten: number;
  bytes: number;
}

export interface ExportActivities {
  /** Writes the export's file and publishes it (activities/exports.ts). */
  runExport(exportId: string, retentionMs: number): Promise<ExportOutcome>;
  /** Records an export as FAILED when writing it failed for good. */
  markExportFailed(exportId: string, reason: string): Promise<void>;
  /** Removes the files of exports past their retention; returns how many. */
  expireExports(): Promise<number>;
}
