import type { ExportActivities, ExportHeartbeat, ExportOutcome } from '../temporal/contracts.ts';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from '../db/index.ts';
import type { Logger } from '../logger.ts';
import { directoryExportStore } from '../services/exports/files.ts';
import { writeExportFile } from '../services/exports/write.ts';
import {
  awaitHeartbeatVerdict,
  confirmStillWanted,
  keepHeartbeating,
  throwIfStopped,
  whyStopped,
  type CheckAttempt,
} from './job-control.ts';

export interface ExportActivityDeps {
  db: Db;
  log: Logger;
  /** The export store's directory (config.exportDir), shared with the API. */
  exportDir: string;
  /** Asks Temporal whether an attempt may still publish its file (job-control.ts). */
  checkAttempt: CheckAttempt;
  /** Records between progress reports (heartbeat, database); tests make it small. */
  exportRecordsPerStep?: number;
  /** Test seam: called after each progress report with what the file holds so far (a throw there fails the attempt; a promise holds it). */
  afterExportStep?: (exportId: string, entitiesWritten: number, attempt: number) => void | Promise<void>;
}

/**
 * A written file outlasts a Temporal outage this long before its attempt gives up: the file is kept aside, so waiting
 * costs nothing, while giving up costs an attempt (five in all) and the whole file again.
 */
const STANDING_PATIENCE_MS = 10 * 60_000;

/** Exports whose files one run of the expiry workflow removes at most (the schedule comes again). */
const EXPIRED_PER_RUN = 1000;

export function createExportActivities(deps: ExportActivityDeps): ExportActivities {
  const store = directoryExportStore(deps.exportDir);
  return {
    /**
     * Writes the export file and publishes it. At-least-once safe: every
     * attempt writes a fresh temporary file from the first record and renames
     * it into place only when complete; an export already COMPLETED is not
     * written again. Cancelled or terminated in Temporal, it drops its file
     * and records why.
     */
    async runExport(exportId: string, retentionMs: number): Promise<ExportOutcome> {
      const context = Context.current();
      const exports = deps.db.exports;
      const row = await exports.find(exportId);
      if (!row) throw ApplicationFailure.nonRetryable(`export ${exportId} is not stored`, 'ExportNotFound');
      // The detail's attempt once the workflow is gone: Temporal's count, kept on the row.
      await exports.recordActivityAttempt(exportId, context.info.attempt);
      if (row.status === 'COMPLETED') {
        return {
          status: 'COMPLETED',
          entitiesWritten: Number(row.entitiesWritten),
          bytes: Number(row.bytes),
          sha256: row.sha256!,
          expiresAt: new Date(row.expiresAt!).toISOString(),
        };
      }
      if (row.status === 'FAILED' || row.status === 'EXPIRED') return { status: row.status };

      const requestedIds = row.requestedIds;
      // Dropped only as the export ends: a row without them was ended by someone else meanwhile.
      if (requestedIds === null) return { status: 'FAILED' };
      const attempt = context.info.attempt;
      const progress: ExportHeartbeat = { phase: 'write', entitiesWritten: 0, bytes: 0 };
      const heartbeat = keepHeartbeating(context, () => progress);
      try {
        const missing = await exports.findMissing(requestedIds);
        await exports.markRunning(exportId, missing);
        const summary = await writeExportFile(
          deps.db.exportRecords,
          store,
          { ...row, requestedIds },
          {
            attempt,
            recordsPerStep: deps.exportRecordsPerStep,
            onStep: async ({ entitiesWritten, bytes }) => {
              progress.entitiesWritten = entitiesWritten;
              progress.bytes = bytes;
              heartbeat.now();
              throwIfStopped(context);
              await exports.recordProgress(exportId, entitiesWritten, bytes);
              await deps.afterExportStep?.(exportId, entitiesWritten, attempt);
            },
          },
        );
        progress.phase = 'publish';
        progress.entitiesWritten = summary.entitiesWritten;
        progress.bytes = summary.bytes;
        // The file is in place; it counts only once the row says so, and only for an attempt still wanted.
        await confirmStillWanted(context, deps.checkAttempt, STANDING_PATIENCE_MS);
        const finishedAt = new Date();
        const expiresAt = new Date(finishedAt.getTime() + retentionMs);
        await exports.complete(exportId, {
          filePath: summary.fileKey,
          entitiesWritten: summary.entitiesWritten,
          bytes: summary.bytes,
          sha256: summary.sha256,
          upToTransId: summary.upToTransId,
          finishedAt,
          expiresAt,
        });
        deps.log.info(
          { exportId, kind: row.kind, entities: summary.entitiesWritten, bytes: summary.bytes, missing: missing.length },
          'export finished',
        );
        return {
          status: 'COMPLETED',
          entitiesWritten: summary.entitiesWritten,
          bytes: summary.bytes,
          sha256: summary.sha256,
          expiresAt: expiresAt.toISOString(),
        };
      } catch (error) {
        throw await recordStop(exportId, context, error);
      } finally {
        heartbeat.stop();
      }
    },

    /** Records an export as FAILED once writing it failed for good, and drops any partial file. */
    async markExportFailed(exportId: string, reason: string): Promise<void> {
      await deps.db.exports.fail(exportId, reason);
      const row = await deps.db.exports.findState(exportId);
      if (row?.status === 'FAILED') await store.remove(exportId);
    },

    /** The end of the retention, for every export past it: the file goes, the status says EXPIRED. Returns how many. */
    async expireExports(): Promise<number> {
      const expired = await deps.db.exports.expireDue(EXPIRED_PER_RUN, (id) => store.remove(id));
      if (expired.length > 0) deps.log.info({ exports: expired }, 'exports expired');
      return expired.length;
    },
  };

  /**
   * After an attempt ended on `error` (its temporary file is gone already):
   * an export stopped by an operator is recorded FAILED with the reason and
   * any published file removed; a superseded attempt records nothing.
   */
  async function recordStop(exportId: string, context: Context, error: unknown): Promise<unknown> {
    const stopped = await whyStopped(context, error, deps.checkAttempt);
    if (!stopped) return error;
    deps.log.warn(
      { exportId, ending: stopped.ending, reason: stopped.reason, attempt: context.info.attempt },
      'export stopped; its file was removed',
    );
    if (stopped.ending !== 'superseded') {
      await deps.db.exports.fail(
        exportId,
        `${stopped.ending === 'closed' ? 'stopped' : `${stopped.ending} by an operator`}: ${stopped.reason}; no file was kept`,
      );
      await store.remove(exportId);
    }
    await awaitHeartbeatVerdict(context);
    return error;
  }
}
