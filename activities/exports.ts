import { ApplicationFailure, Context } from '@temporalio/activity';
import { pgPool, type Orm } from '../db/orm.ts';
import type { Logger } from '../logger.ts';
import { directoryExportStore } from '../services/exports/files.ts';
import { findMissing } from '../services/exports/ids.ts';
import { completeExport, failExport, findExport, markExpired, markRunning, recordProgress } from '../services/exports/requests.ts';
import { writeExportFile } from '../services/exports/write.ts';

export interface ExportActivityDeps {
  orm: Orm;
  log: Logger;
  /** The export store's directory (config.exportDir), shared with the API. */
  exportDir: string;
  /** Records between progress reports (heartbeat, database); tests make it small. */
  exportRecordsPerStep?: number;
  /** Test seam: called after each progress report with what the file holds so far (a throw there fails the attempt). */
  afterExportStep?: (exportId: string, entitiesWritten: number, attempt: number) => void;
}

export type ExportOutcome =
  | { status: 'COMPLETED'; entitiesWritten: number; bytes: number; sha256: string; expiresAt: string }
  | { status: 'FAILED' | 'EXPIRED' };

export function createExportActivities(deps: ExportActivityDeps) {
  const store = directoryExportStore(deps.exportDir);
  return {
    /**
     * Writes the export file and publishes it. At-least-once safe: every
     * attempt writes a fresh temporary file from the first record and renames
     * it into place only when complete; an export already COMPLETED is not
     * written again.
     */
    async runExport(exportId: string, retentionMs: number): Promise<ExportOutcome> {
      const pool = await pgPool(deps.orm);
      const row = await findExport(pool, exportId);
      if (!row) throw ApplicationFailure.nonRetryable(`export ${exportId} is not stored`, 'ExportNotFound');
      if (row.status === 'COMPLETED') {
        return { status: 'COMPLETED', entitiesWritten: Number(row.entitiesWritten), bytes: Number(row.bytes), sha256: row.sha256!, expiresAt: new Date(row.expiresAt!).toISOString() };
      }
      if (row.status === 'FAILED' || row.status === 'EXPIRED') return { status: row.status };

      const context = Context.current();
      const attempt = context.info.attempt;
      const missing = await findMissing(pool, row.requestedIds);
      await markRunning(pool, exportId, missing);
      const summary = await writeExportFile(pool, store, row, {
        attempt,
        recordsPerStep: deps.exportRecordsPerStep,
        onStep: async ({ entitiesWritten, bytes }) => {
          context.heartbeat({ entitiesWritten, bytes });
          context.cancellationSignal.throwIfAborted();
          await recordProgress(pool, exportId, entitiesWritten, bytes);
          deps.afterExportStep?.(exportId, entitiesWritten, attempt);
        },
      });
      const finishedAt = new Date();
      const expiresAt = new Date(finishedAt.getTime() + retentionMs);
      await completeExport(pool, exportId, {
        filePath: summary.fileKey,
        entitiesWritten: summary.entitiesWritten,
        bytes: summary.bytes,
        sha256: summary.sha256,
        finishedAt,
        expiresAt,
      });
      deps.log.info({ exportId, kind: row.kind, entities: summary.entitiesWritten, bytes: summary.bytes, missing: missing.length }, 'export finished');
      return { status: 'COMPLETED', entitiesWritten: summary.entitiesWritten, bytes: summary.bytes, sha256: summary.sha256, expiresAt: expiresAt.toISOString() };
    },

    /** Records an export as FAILED once writing it failed for good, and drops any partial file. */
    async markExportFailed(exportId: string, reason: string): Promise<void> {
      const pool = await pgPool(deps.orm);
      await failExport(pool, exportId, reason);
      const row = await findExport(pool, exportId);
      if (row?.status === 'FAILED') await store.remove(exportId);
    },

    /** The end of the retention: the file goes, the status says EXPIRED. */
    async expireExport(exportId: string): Promise<void> {
      const pool = await pgPool(deps.orm);
      await store.remove(exportId);
      await markExpired(pool, exportId);
      deps.log.info({ exportId }, 'export expired');
    },
  };
}

export type ExportActivities = ReturnType<typeof createExportActivities>;
