import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';
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

/** A body already written by a BodyWriter in the caller's transaction. */
export interface StoredBody {
  uploadId: string;
  bytes: number;
}

export interface NewBatch {
  id: string;
  sha256: string;
  apiVersion: XmlVersion;
  submittedBy: string;
  force: boolean;
  offeredForceKey?: string;
  changesTotal: number;
  /** The body, or its chunks already written in this transaction. */
  body: Buffer | StoredBody;
}

/**
 * Inserts the batch, or revives a FAILED batch of the same id for another
 * attempt, with its body. Returns false when the id is taken by a batch that
 * completed or is still running: the caller answers 409 (and rolls back the
 * chunks it wrote).
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
  let body: StoredBody;
  if (Buffer.isBuffer(batch.body)) {
    const writer = new BodyWriter(async () => client);
    await writer.write(batch.body);
    body = await writer.finish();
  } else {
    body = batch.body;
  }
  // An earlier attempt's body goes, its chunks with it (cascade).
  await client.query('delete from batch_body where batch_id = $1', [batch.id]);
  await client.query('insert into batch_body (batch_id, upload_id, bytes) values ($1, $2, $3)', [batch.id, body.uploadId, body.bytes]);
  return true;
}

/** Body bytes per batch_body_chunk row. */
const BODY_CHUNK_BYTES = 1024 * 1024;

// COPY's binary format: a signature, flags and header extension, then per row the field count and each field's length and bytes.
const COPY_SIGNATURE = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/**
 * Writes a body into batch_body_chunk as it arrives, by binary COPY in rows
 * of BODY_CHUNK_BYTES, in the transaction of the connection `connect` gives
 * (asked for once the first row is full, or at `finish`: a small body holds
 * no connection while it arrives). Memory holds one row, not the body. The
 * chunks are the transaction's until storeBatch links them to their batch; a
 * rollback, or the connection dropped while the COPY is open, leaves nothing.
 */
export class BodyWriter {
  readonly uploadId = randomUUID();
  readonly #connect: () => Promise<pg.PoolClient>;
  readonly #uuid: Buffer;
  readonly #pending: Buffer[] = [];
  #stream: CopyStreamQuery | undefined;
  #pendingBytes = 0;
  #seq = 0;
  #bytes = 0;
  #finished = false;

  constructor(connect: () => Promise<pg.PoolClient>) {
    this.#connect = connect;
    this.#uuid = Buffer.from(this.uploadId.replaceAll('-', ''), 'hex');
  }

  /** Whether a COPY is open on the connection: then only dropping the connection ends its transaction. */
  get copying(): boolean {
    return this.#stream !== undefined && !this.#finished;
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.#bytes += chunk.length;
    let rest = chunk;
    while (rest.length > 0) {
      const take = Math.min(rest.length, BODY_CHUNK_BYTES - this.#pendingBytes);
      this.#pending.push(Buffer.from(rest.buffer, rest.byteOffset, take));
      this.#pendingBytes += take;
      rest = rest.subarray(take);
      if (this.#pendingBytes === BODY_CHUNK_BYTES) await this.#flush();
    }
  }

  /** Writes the last row and ends the COPY; the body is then in the transaction. */
  async finish(): Promise<StoredBody> {
    if (this.#pendingBytes > 0 || this.#seq === 0) await this.#flush();
    const stream = this.#stream as CopyStreamQuery;
    stream.end(COPY_TRAILER);
    await finished(stream);
    this.#finished = true;
    return { uploadId: this.uploadId, bytes: this.#bytes };
  }

  async #flush(): Promise<void> {
    let stream = this.#stream;
    const first = stream === undefined;
    if (stream === undefined) {
      const client = await this.#connect();
      stream = this.#stream = client.query(copyFrom('copy batch_body_chunk (upload_id, seq, data) from stdin (format binary)'));
      // A failed COPY rejects the write or finish that meets it; until then its error must not go unhandled.
      stream.on('error', () => undefined);
    }
    const head = Buffer.alloc(2 + 4 + 16 + 4 + 4 + 4);
    let at = head.writeInt16BE(3, 0);
    at = head.writeInt32BE(16, at);
    at += this.#uuid.copy(head, at);
    at = head.writeInt32BE(4, at);
    at = head.writeInt32BE(this.#seq, at);
    head.writeInt32BE(this.#pendingBytes, at);
    const row = Buffer.concat([...(first ? [COPY_SIGNATURE] : []), head, ...this.#pending]);
    this.#seq += 1;
    this.#pending.length = 0;
    this.#pendingBytes = 0;
    if (!stream.write(row)) await once(stream, 'drain');
  }
}

/** The stored body in its chunks, in order, one query a chunk: a batch of any size never needs one large value. */
export async function* readBatchBody(db: Queryable, batchId: string): AsyncGenerator<Buffer> {
  const { rows } = await db.query<{ uploadId: string }>('select upload_id as "uploadId" from batch_body where batch_id = $1', [batchId]);
  const uploadId = rows[0]?.uploadId;
  if (uploadId === undefined) return;
  for (let seq = 0; ; seq += 1) {
    const chunk = await db.query<{ data: Buffer }>('select data from batch_body_chunk where upload_id = $1 and seq = $2', [uploadId, seq]);
    const data = chunk.rows[0]?.data;
    if (data === undefined) return;
    if (data.length > 0) yield data;
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
