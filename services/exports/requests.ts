import type { ExportKind, ExportStatus } from '../../db/entities/export-request.ts';
import type { Queryable } from '../../db/sql.ts';
import type { RequestedId } from './ids.ts';

// Every query on export_request, shared by the API and the activities.

export interface ExportRow {
  id: string;
  kind: ExportKind;
  requestedIds: RequestedId[];
  /** Revisions exports: the commit_seq of fromTransId; revisions of transactions committed after it are exported. */
  fromSeq: string | null;
  fromTransId: string | null;
  status: ExportStatus;
  requestedBy: string;
  /** Key of the finished file in the export store. */
  filePath: string | null;
  entitiesWritten: string | number;
  bytes: string | number;
  sha256: string | null;
  missing: string[];
  error: string | null;
  /** Attempts Temporal started of the export activity; null before the first. */
  activityAttempts: number | null;
  createdAt: Date | string;
  finishedAt: Date | string | null;
  expiresAt: Date | string | null;
}

// Every column but the requested ids, which only the export activity reads.
const EXPORT_STATE = `id, kind, from_seq as "fromSeq", from_trans_id as "fromTransId",
  status, requested_by as "requestedBy", file_path as "filePath", entities_written as "entitiesWritten", bytes, sha256,
  missing, error, activity_attempts as "activityAttempts", created_at as "createdAt", finished_at as "finishedAt", expires_at as "expiresAt"`;
const EXPORT_COLUMNS = `${EXPORT_STATE}, requested_ids as "requestedIds"`;

export async function findExport(db: Queryable, id: string): Promise<ExportRow | undefined> {
  const { rows } = await db.query<ExportRow>(`select ${EXPORT_COLUMNS} from export_request where id = $1`, [id]);
  return rows[0];
}

/** An export without its list of requested ids (up to EXPORT_MAX_IDS, megabytes): what status, detail and download need. */
export type ExportState = Omit<ExportRow, 'requestedIds'> & { requestedCount: number };

/** The export as a status read needs it; prepared, as every poll of every client runs it. */
export async function findExportState(db: Queryable, id: string): Promise<ExportState | undefined> {
  const { rows } = await db.query<ExportState>({
    name: 'export-state-by-id',
    text: `select ${EXPORT_STATE}, jsonb_array_length(requested_ids) as "requestedCount" from export_request where id = $1`,
    values: [id],
  });
  return rows[0];
}

export interface NewExport {
  id: string;
  kind: ExportKind;
  requestedIds: readonly RequestedId[];
  fromSeq?: string;
  fromTransId?: string;
  requestedBy: string;
}

export async function insertExport(db: Queryable, request: NewExport): Promise<void> {
  await db.query(
    `insert into export_request (id, kind, requested_ids, from_seq, from_trans_id, status, requested_by)
     values ($1, $2, $3, $4, $5, 'ACCEPTED', $6)`,
    [request.id, request.kind, JSON.stringify(request.requestedIds), request.fromSeq ?? null, request.fromTransId ?? null, request.requestedBy],
  );
}

/** Starts (or restarts, on a retried attempt) the run: progress goes back to zero with the file. */
export async function markRunning(db: Queryable, id: string, missing: readonly string[]): Promise<boolean> {
  const updated = await db.query(
    `update export_request set status = 'RUNNING', entities_written = 0, bytes = 0, missing = $2, error = null
      where id = $1 and status in ('ACCEPTED', 'RUNNING')`,
    [id, JSON.stringify(missing)],
  );
  return updated.rowCount === 1;
}

/** Records that Temporal started attempt `attempt` of the export activity; the highest number wins (see recordActivityAttempt of batches). */
export async function recordExportAttempt(db: Queryable, id: string, attempt: number): Promise<void> {
  await db.query('update export_request set activity_attempts = greatest(coalesce(activity_attempts, 0), $2) where id = $1', [id, attempt]);
}

export async function recordProgress(db: Queryable, id: string, entitiesWritten: number, bytes: number): Promise<void> {
  await db.query(`update export_request set entities_written = $2, bytes = $3 where id = $1 and status = 'RUNNING'`, [id, entitiesWritten, bytes]);
}

export interface FinishedExport {
  filePath: string;
  entitiesWritten: number;
  bytes: number;
  sha256: string;
  finishedAt: Date;
  expiresAt: Date;
}

export async function completeExport(db: Queryable, id: string, done: FinishedExport): Promise<void> {
  await db.query(
    `update export_request set status = 'COMPLETED', file_path = $2, entities_written = $3, bytes = $4, sha256 = $5,
       finished_at = $6, expires_at = $7, error = null
      where id = $1 and status in ('ACCEPTED', 'RUNNING')`,
    [id, done.filePath, done.entitiesWritten, done.bytes, done.sha256, done.finishedAt, done.expiresAt],
  );
}

export async function failExport(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(
    `update export_request set status = 'FAILED', error = $2, finished_at = clock_timestamp() where id = $1 and status in ('ACCEPTED', 'RUNNING')`,
    [id, error],
  );
}

/**
 * Expires up to `limit` finished exports past their expiry: removes each file
 * (`remove`, missing files are fine) and then marks the row EXPIRED, so a
 * crash in between leaves the row to be expired again. Returns their ids.
 */
export async function expireDueExports(db: Queryable, limit: number, remove: (id: string) => Promise<void>): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from export_request where status = 'COMPLETED' and expires_at <= clock_timestamp() order by expires_at limit $1`,
    [limit],
  );
  const expired: string[] = [];
  for (const { id } of rows) {
    await remove(id);
    const updated = await db.query(`update export_request set status = 'EXPIRED' where id = $1 and status = 'COMPLETED'`, [id]);
    if (updated.rowCount === 1) expired.push(id);
  }
  return expired;
}

/** Exports ACCEPTED or RUNNING since longer than this: their workflow may have ended without them. */
export async function findStaleRunningExports(db: Queryable, olderThanSeconds: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from export_request where status in ('ACCEPTED', 'RUNNING') and created_at < now() - make_interval(secs => $1) order by created_at limit $2`,
    [olderThanSeconds, limit],
  );
  return rows.map((row) => row.id);
}
