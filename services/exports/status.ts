import type { ExportKind, ExportState, ExportStatus } from '../../db/exports.ts';
import { percent, toIso, type ProcessStatus } from '../batches/status.ts';

/** Our extension resource (GET /api/v2/export/{id}/detail): what stands behind the real client's `{state, progress}`. */
export interface ExportStatusView extends ProcessStatus {
  id: string;
  kind: ExportKind;
  status: ExportStatus;
  fromTransId: string | null;
  /** The last committed transaction the file includes (known once it is written): follow the feed from it. */
  upToTransId: string | null;
  entitiesWritten: number;
  bytes: number;
  missing: string[];
  /** Temporal's attempt of the export activity: the current one while the workflow runs, the number started once it ended; null before the first. */
  attempt: number | null;
  /** SHA-256 (hex) of the finished file, as sent with the download. */
  sha256: string | null;
  createdAt: string;
  finishedAt: string | null;
  expiresAt: string | null;
  error: string | null;
}

/**
 * The status clients see. A file past its expiry is EXPIRED at once, even in
 * the moment before the workflow's retention timer has deleted it.
 */
export function effectiveStatus(row: Pick<ExportState, 'status' | 'expiresAt'>, now = Date.now()): ExportStatus {
  if (row.status === 'COMPLETED' && row.expiresAt !== null && new Date(row.expiresAt).getTime() <= now) return 'EXPIRED';
  return row.status;
}

/** The real client's ExportRequestStatus: an expired or failed export is ERROR, a file ready to download FINISHED. */
export function exportProcessStatus(
  row: Pick<ExportState, 'status' | 'expiresAt' | 'entitiesWritten' | 'requestedCount'>,
  now = Date.now(),
): ProcessStatus {
  switch (effectiveStatus(row, now)) {
    case 'ACCEPTED':
      return { state: 'PENDING', progress: 0 };
    case 'RUNNING':
      return { state: 'PROCESSING', progress: percent(Number(row.entitiesWritten), row.requestedCount || null) };
    case 'COMPLETED':
      return { state: 'FINISHED', progress: 100 };
    case 'FAILED':
    case 'EXPIRED':
      return { state: 'ERROR', progress: 100 };
  }
}

export function exportStatusView(row: ExportState, now = Date.now()): ExportStatusView {
  return {
    id: row.id,
    ...exportProcessStatus(row, now),
    kind: row.kind,
    status: effectiveStatus(row, now),
    fromTransId: row.fromTransId,
    upToTransId: row.upToTransId,
    entitiesWritten: Number(row.entitiesWritten),
    bytes: Number(row.bytes),
    missing: row.missing,
    attempt: row.activityAttempts,
    sha256: row.sha256,
    createdAt: toIso(row.createdAt),
    finishedAt: row.finishedAt === null ? null : toIso(row.finishedAt),
    expiresAt: row.expiresAt === null ? null : toIso(row.expiresAt),
    error: row.error,
  };
}
