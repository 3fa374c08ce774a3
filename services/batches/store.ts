import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { BatchStatus } from '../../db/entities/batch.ts';
import type { Queryable } from '../../db/sql.ts';
import type { BatchResult, XmlVersion } from '../../domain/model.ts';
import type { BatchRun } from './workflow.ts';

// Every query on the batch tables, shared by the API and the activities.

export interface BatchRow {
  id: string;
  bodySha256: string;
  apiVersion: XmlVersion;
  submittedBy: string;
  status: BatchStatus;
  force: boolean;
  offeredForceKey: string | null;
  changesTotal: number | null;
  changesApplied: number;
  result: BatchResult | null;
  error: string | null;
  /** Submissions of this batch id: a FAILED batch sent again is revived with attempt + 1. */
  attempt: number;
  /** Attempts Temporal started of the apply activity for this submission; null before the first. */
  activityAttempts: number | null;
  submittedAt: Date | string;
  finishedAt: Date | string | null;
}

// Every column but the result document, which is read only where it is answered.
const BATCH_STATE = `id, body_sha256 as "bodySha256", api_version as "apiVersion", submitted_by as "submittedBy", status,
  force, offered_force_key as "offeredForceKey", changes_total as "changesTotal", changes_applied as "changesApplied",
  error, attempt, activity_attempts as "activityAttempts", submitted_at as "submittedAt", finished_at as "finishedAt"`;
const BATCH_COLUMNS = `${BATCH_STATE}, result`;

export async function findBatch(db: Queryable, batchId: string): Promise<BatchRow | undefined> {
  const { rows } = await db.query<BatchRow>(`select ${BATCH_COLUMNS} from batch where id = $1`, [batchId]);
  return rows[0];
}

/** A batch without its result document (megabytes for a large batch): what status and detail reads need. */
export type BatchState = Omit<BatchRow, 'result'> & { hasResult: boolean };

/** The batch as a status read needs it; prepared, as every poll of every client runs it. */
export async function findBatchState(db: Queryable, batchId: string): Promise<BatchState | undefined> {
  const { rows } = await db.query<BatchState>({ name: 'batch-state-by-id', text: `select ${BATCH_STATE}, result is not null as "hasResult" from batch where id = $1`, values: [batchId] });
  return rows[0];
}

/** The result document of a batch, read only where it is answered (it may be megabytes). */
export async function findBatchResult(db: Queryable, batchId: string): Promise<BatchResult | null> {
  const { rows } = await db.query<{ result: BatchResult | null }>('select result from batch where id = $1', [batchId]);
  return rows[0]?.result ?? null;
}

/** Another batch with the same body that completed or is still running (a FAILED one may be sent again). */
export async function findLiveBatchWithBody(db: Queryable, sha256: string, exceptId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `select id from batch where body_sha256 = $1 and id <> $2 and status <> 'FAILED' limit 1`,
    [sha256, exceptId],
  );
  return rows[0]?.id;
}

/** Batches still ACCEPTED this long after they were stored: their workflow may never have started. */
export async function findStaleAcceptedBatches(db: Queryable, olderThanSeconds: number, limit: number): Promise<BatchRun[]> {
  const { rows } = await db.query<BatchRun>(
    `select b.id as "batchId", b.submitted_by as submitter, b.api_version as "apiVersion", coalesce(b.changes_total, 0) as changes, bb.bytes
       from batch b join batch_body bb on bb.batch_id = b.id
      where b.status = 'ACCEPTED' and b.submitted_at < now() - make_interval(secs => $1)
      order by b.submitted_at limit $2`,
    [olderThanSeconds, limit],
  );
  return rows.map((row) => ({ ...row, bytes: Number(row.bytes) }));
}

/** Batches PROCESSING since longer than this: their workflow may have ended without them. */
export async function findStaleProcessingBatches(db: Queryable, olderThanSeconds: number, limit: number): Promise<BatchRun[]> {
  const { rows } = await db.query<BatchRun>(
    `select b.id as "batchId", b.submitted_by as submitter, b.api_version as "apiVersion", coalesce(b.changes_total, 0) as changes, coalesce(bb.bytes, 0) as bytes
       from batch b left join batch_body bb on bb.batch_id = b.id
      where b.status = 'PROCESSING' and b.submitted_at < now() - make_interval(secs => $1)
      order by b.submitted_at limit $2`,
    [olderThanSeconds, limit],
  );
  return rows.map((row) => ({ ...row, bytes: Number(row.bytes) }));
}

export interface NewBatch {
  id: string;
  sha256: string;
  apiVersion: XmlVersion;
  submittedBy: string;
  force: boolean;
  offeredForceKey?: string;
  changesTotal: number;
  body: Buffer;
}

/**
 * Inserts the batch, or revives a FAILED batch of the same id for another
 * attempt. Returns false when the id is taken by a batch that completed or is
 * still running: the caller answers 409.
 */
export async function storeBatch(client: pg.PoolClient, batch: NewBatch): Promise<boolean> {
  const inserted = await client.query(
    `insert into batch (id, body_sha256, api_version, submitted_by, status, force, offered_force_key, changes_total)
     values ($1, $2, $3, $4, 'ACCEPTED', $5, $6, $7)
     on conflict (id) do update set
       body_sha256 = excluded.body_sha256, api_version = excluded.api_version, submitted_by = excluded.submitted_by,
       status = 'ACCEPTED', force = excluded.force, offered_force_key = excluded.offered_force_key,
       changes_total = excluded.changes_total, changes_applied = 0, result = null, error = null,
       attempt = batch.attempt + 1, activity_attempts = null, submitted_at = now(), finished_at = null
     where batch.status = 'FAILED'`,
    [batch.id, batch.sha256, batch.apiVersion, batch.submittedBy, batch.force, batch.offeredForceKey ?? null, batch.changesTotal],
  );
  if (inserted.rowCount === 0) return false;
  await client.query('delete from batch_body where batch_id = $1', [batch.id]);
  await copyBody(client, batch.id, batch.body);
  return true;
}

/** Body bytes hex-encoded per COPY chunk: the chunk, not the body, is what is copied in memory. */
const COPY_BODY_CHUNK_BYTES = 1024 * 1024;

/**
 * The body goes in by COPY, hex-encoded a chunk at a time with backpressure:
 * as a query parameter, pg would copy the whole body into one message buffer
 * (grown by doubling) beside the body itself.
 */
async function copyBody(client: pg.PoolClient, batchId: string, body: Buffer): Promise<void> {
  const stream = client.query(copyFrom('copy batch_body (batch_id, bytes, body) from stdin'));
  const write = async (chunk: string | Buffer) => {
    if (!stream.write(chunk)) await once(stream, 'drain');
  };
  // COPY's text format: \\x is the escaped form of bytea's \x hex prefix.
  await write(`${batchId}\t${body.length}\t\\\\x`);
  for (let offset = 0; offset < body.length; offset += COPY_BODY_CHUNK_BYTES) {
    await write(Buffer.from(body.subarray(offset, offset + COPY_BODY_CHUNK_BYTES).toString('hex'), 'latin1'));
  }
  stream.end('\n');
  await finished(stream);
}

const BODY_CHUNK_BYTES = 4 * 1024 * 1024;

/** The stored body in chunks, so a 100 MB batch never needs one 100 MB (or hex-encoded 200 MB) value. */
export async function* readBatchBody(db: Queryable, batchId: string): AsyncGenerator<Buffer> {
  const { rows } = await db.query<{ bytes: string }>('select bytes from batch_body where batch_id = $1', [batchId]);
  const total = Number(rows[0]?.bytes ?? 0);
  for (let offset = 0; offset < total; offset += BODY_CHUNK_BYTES) {
    const chunk = await db.query<{ part: Buffer }>(
      'select substring(body from $2 for $3) as part from batch_body where batch_id = $1',
      [batchId, offset + 1, BODY_CHUNK_BYTES],
    );
    const part = chunk.rows[0]?.part;
    if (part) yield part;
  }
}

export async function markProcessing(db: Queryable, batchId: string): Promise<void> {
  await db.query(`update batch set status = 'PROCESSING' where id = $1 and status = 'ACCEPTED'`, [batchId]);
}

/**
 * Records that Temporal started attempt `attempt` of the batch's apply
 * activity, whatever the batch's state (a retry that finds the batch
 * finished counts too). The highest number wins: an attempt that timed out
 * and lingers cannot lower it.
 */
export async function recordActivityAttempt(db: Queryable, batchId: string, attempt: number): Promise<void> {
  await db.query('update batch set activity_attempts = greatest(coalesce(activity_attempts, 0), $2) where id = $1', [batchId, attempt]);
}

export async function recordProgress(db: Queryable, batchId: string, changesApplied: number): Promise<void> {
  await db.query(`update batch set changes_applied = $2 where id = $1 and status = 'PROCESSING'`, [batchId, changesApplied]);
}

/**
 * Ends a batch still ACCEPTED or PROCESSING; false when it had ended already
 * (an operator's stop recorded first). finished_at is the clock's time, not
 * the start of a long transaction this may run in.
 */
export async function finishBatch(db: Queryable, batchId: string, status: 'COMPLETED' | 'FAILED', result: BatchResult | null, error?: string): Promise<boolean> {
  const updated = await db.query(
    `update batch set status = $2, result = $3, error = $4, finished_at = clock_timestamp(),
       changes_applied = case when $2 = 'COMPLETED' then coalesce(changes_total, changes_applied) else changes_applied end
     where id = $1 and status in ('ACCEPTED', 'PROCESSING')`,
    [batchId, status, result === null ? null : JSON.stringify(result), error ?? null],
  );
  return updated.rowCount === 1;
}

/** The transaction a batch committed, if it did: the marker that makes a retried apply a no-op. */
export async function findBatchTransaction(db: Queryable, batchId: string): Promise<{ uuid: string; seq: string } | undefined> {
  const { rows } = await db.query<{ uuid: string; seq: string }>('select uuid, seq from transaction where batch_id = $1', [batchId]);
  return rows[0];
}
