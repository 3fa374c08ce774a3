import type { ExportKind, ExportStatus } from '../../db/entities/export-request.ts';
import type { ExportRow } from './requests.ts';

export interface ExportStatusView {
  id: string;
  kind: ExportKind;
  status: ExportStatus;
  fromTransId: string | null;
  entitiesWritten: number;
  bytes: number;
  missing: string[];
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
export function effectiveStatus(row: Pick<ExportRow, 'status' | 'expiresAt'>, now = Date.now()): ExportStatus {
  if (row.status === 'COMPLETED' && row.expiresAt !== null && new Date(row.expiresAt).getTime() <= now) return 'EXPIRED';
  return row.status;
}

export function exportStatusView(row: ExportRow, now = Date.now()): ExportStatusView {
  return {
    id: row.id,
    kind: row.kind,
    status: effectiveStatus(row, now),
    fromTransId: row.fromTransId,
    entitiesWritten: Number(row.entitiesWritten),
    bytes: Number(row.bytes),
    missing: row.missing,
    sha256: row.sha256,
    createdAt: toIso(row.createdAt),
    finishedAt: row.finishedAt === null ? null : toIso(row.finishedAt),
    expiresAt: row.expiresAt === null ? null : toIso(row.expiresAt),
    error: row.error,
  };
}

/** The ORM's pool hands timestamps back as text; either way the API answers ISO 8601 in UTC. */
function toIso(value: Date | string): string {
  return new Date(value).toISOString();
}
