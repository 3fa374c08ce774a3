import type pg from 'pg';
import { raw } from '@mikro-orm/core';
import type { BatchResult, XmlVersion } from '../domain/model.ts';
import { readBatchBody } from './batch-bodies.ts';
import { BatchUpload, findLiveBatchWithBody } from './batch-upload.ts';
import { BatchSchema, type Batch } from './entities/batch.ts';
import type { Orm } from './orm.ts';
import { asRow, type Columns } from './rows.ts';
import type { Queryable } from './sql.ts';
import { STAGED_SUCCESS_JSONB } from './apply/result-lines.ts';

export type { StoredBody } from './batch-bodies.ts';
export { storeBatch, type BatchUpload } from './batch-upload.ts';

/** A stored batch, its result document included: the entity's columns as plain data. */
export type BatchRow = Columns<Batch>;

/** A batch without its result document (megabytes for a large batch): what status and detail reads need. */
export type BatchState = Omit<BatchRow, 'result'>;

/** A batch whose workflow may be missing, as recovery starts it again. */
export interface StrandedBatch {
  batchId: string;
  submitter: string;
  apiVersion: XmlVersion;
  changes: number;
  bytes: number;
  /** Where the next page of stranded batches starts (its submission time and id). */
  cursor: StrandedCursor;
}

/** A keyset position among batches or exports in the order they were stored. */
export interface StrandedCursor {
  at: string;
  id: string;
}

const STILL_RUNNING = ['ACCEPTED', 'PROCESSING'] as const;

// The columns of BatchState; timestamps come back as text from MikroORM's pool and are made Dates.
const BATCH_STATE_BY_ID = `select id, body_sha256 as "bodySha256", api_version as "apiVersion", submitted_by as "submittedBy", status,
  force, offered_force_key as "offeredForceKey", changes_total as "changesTotal", changes_applied as "changesApplied",
  error, attempt, activity_attempts as "activityAttempts", submitted_at as "submittedAt", finished_at as "finishedAt",
  result is not null as "hasResult"
  from batch where id = $1`;

/**
 * The batch rows through MikroORM's EntityManager: whole-row reads on a fork
 * of it, state changes as guarded `nativeUpdate`s that say whether they
 * applied. SQL on MikroORM's pool where the EntityManager does not fit: the
 * status read every poll runs (prepared), reads joined to batch_body, and
 * the body chunks. What must share a transaction with other SQL (the
 * upload's body COPY, the apply's revisions) takes that transaction's
 * connection: batch-upload.ts and the functions below the class.
 */
export class BatchRepository {
  readonly #orm: Orm;
  readonly #pool: pg.Pool;

  constructor(orm: Orm, pool: pg.Pool) {
    this.#orm = orm;
    this.#pool = pool;
  }

  /** The whole row, result document included: for the reads that answer it. */
  async find(batchId: string): Promise<BatchRow | undefined> {
    return asRow<BatchRow>(await this.#em().findOne(BatchSchema, batchId));
  }

  /**
   * The batch as a status read needs it: no result document. Every poll of
   * every client runs it, so it is one named prepared statement on the pool,
   * not the EntityManager (whose findOne cost about ten times the CPU per
   * read, measured: docs/decisions/0073).
   */
  async findState(batchId: string): Promise<BatchState | undefined> {
    const { rows } = await this.#pool.query<BatchState>({ name: 'batch-state-by-id', text: BATCH_STATE_BY_ID, values: [batchId] });
    const row = rows[0];
    return row && { ...row, submittedAt: new Date(row.submittedAt), finishedAt: row.finishedAt === null ? null : new Date(row.finishedAt) };
  }

  /** The result document of a batch, read only where it is answered (it may be megabytes). */
  async findResult(batchId: string): Promise<BatchResult | null> {
    const row = await this.#em().findOne(BatchSchema, batchId, { fields: ['result'] });
    return row?.result ?? null;
  }

  /** Another batch with the same body that completed or is still running (a FAILED one may be sent again). */
  findLiveWithBody(sha256: string, exceptId: string): Promise<string | undefined> {
    return findLiveBatchWithBody(this.#pool, sha256, exceptId);
  }

  /** Batches still ACCEPTED this long after they were stored: their workflow may never have started. */
  findStaleAccepted(olderThanSeconds: number, limit: number, after?: StrandedCursor): Promise<StrandedBatch[]> {
    return findStranded(this.#pool, 'ACCEPTED', olderThanSeconds, limit, after);
  }

  /** Batches PROCESSING since longer than this: their workflow may have ended without them. */
  findStaleProcessing(olderThanSeconds: number, limit: number, after?: StrandedCursor): Promise<StrandedBatch[]> {
    return findStranded(this.#pool, 'PROCESSING', olderThanSeconds, limit, after);
  }

  /** ACCEPTED → PROCESSING; false when the batch was not ACCEPTED (a retry, or it ended). */
  async markProcessing(batchId: string): Promise<boolean> {
    return (await this.#em().nativeUpdate(BatchSchema, { id: batchId, status: 'ACCEPTED' }, { status: 'PROCESSING' })) === 1;
  }

  /**
   * Records that Temporal started attempt `attempt` of the batch's apply
   * activity, whatever the batch's state (a retry that finds the batch
   * finished counts too). The highest number wins: an attempt that timed out
   * and lingers cannot lower it.
   */
  async recordActivityAttempt(batchId: string, attempt: number): Promise<void> {
    await this.#em().nativeUpdate(
      BatchSchema,
      { id: batchId, $or: [{ activityAttempts: null }, { activityAttempts: { $lt: attempt } }] },
      { activityAttempts: attempt },
    );
  }

  /** The changes written so far, while the batch is PROCESSING. */
  async recordProgress(batchId: string, changesApplied: number): Promise<void> {
    await this.#em().nativeUpdate(BatchSchema, { id: batchId, status: 'PROCESSING' }, { changesApplied });
  }

  /**
   * Ends a batch still ACCEPTED or PROCESSING as FAILED, with no result and
   * why; false when it had ended already. (The apply ends its batch in its
   * own transaction: finishBatch below.)
   */
  async fail(batchId: string, reason: string): Promise<boolean> {
    const updated = await this.#em().nativeUpdate(
      BatchSchema,
      { id: batchId, status: { $in: [...STILL_RUNNING] } },
      { status: 'FAILED', result: null, error: reason, finishedAt: raw('clock_timestamp()') },
    );
    return updated === 1;
  }

  /**
   * Removes a batch still ACCEPTED, its body with it: a synchronous
   * submission whose workflow could not be started, refused so that no
   * later apply can duplicate what its client sends again. False when it
   * had moved on (a start that did reach Temporal began it).
   */
  async discardAccepted(batchId: string): Promise<boolean> {
    return (await this.#em().nativeDelete(BatchSchema, { id: batchId, status: 'ACCEPTED' })) === 1;
  }

  /**
   * Removes the stored bodies of up to `limit` batches that ended (COMPLETED
   * or FAILED) more than `olderThanDays` days ago; returns how many. The batch
   * rows stay, with their results and revisions: the record of what happened.
   */
  async removeEndedBodies(olderThanDays: number, limit: number): Promise<number> {
    const { rowCount } = await this.#pool.query(
      `delete from batch_body where batch_id in (
         select b.id from batch b join batch_body bb on bb.batch_id = b.id
          where b.status in ('COMPLETED', 'FAILED') and b.finished_at < now() - make_interval(days => $1)
          limit $2)`,
      [olderThanDays, limit],
    );
    return rowCount ?? 0;
  }

  /** The stored body of a batch, in its chunks. */
  readBody(batchId: string): AsyncGenerator<Buffer> {
    return readBatchBody(this.#pool, batchId);
  }

  /** A new upload: its body, duplicate checks and batch row in one transaction (batch-upload.ts). */
  openUpload(): BatchUpload {
    return new BatchUpload(this.#pool);
  }

  #em() {
    return this.#orm.em.fork();
  }
}

async function findStranded(
  pool: pg.Pool,
  status: 'ACCEPTED' | 'PROCESSING',
  olderThanSeconds: number,
  limit: number,
  after?: StrandedCursor,
): Promise<StrandedBatch[]> {
  const { rows } = await pool.query<Omit<StrandedBatch, 'cursor'> & { at: string }>(
    `select b.id as "batchId", b.submitted_by as submitter, b.api_version as "apiVersion", coalesce(b.changes_total, 0) as changes, coalesce(bb.bytes, 0) as bytes,
            b.submitted_at::text as at
       from batch b ${status === 'ACCEPTED' ? 'join' : 'left join'} batch_body bb on bb.batch_id = b.id
      where b.status = $3 and b.submitted_at < now() - make_interval(secs => $1)
        and ($4::timestamptz is null or (b.submitted_at, b.id) > ($4::timestamptz, $5::uuid))
      order by b.submitted_at, b.id limit $2`,
    [olderThanSeconds, limit, status, after?.at ?? null, after?.id ?? null],
  );
  return rows.map(({ at, ...row }) => ({ ...row, bytes: Number(row.bytes), cursor: { at, id: row.batchId } }));
}

// SQL on the connection of a transaction that also writes other tables: the
// EntityManager cannot join a transaction begun on a pg client.

/** ACCEPTED → PROCESSING in the caller's transaction (the bulk loader applies and ends its batches in one). */
export async function markProcessing(db: Queryable, batchId: string): Promise<void> {
  await db.query(`update batch set status = 'PROCESSING' where id = $1 and status = 'ACCEPTED'`, [batchId]);
}

/**
 * Ends a batch still ACCEPTED or PROCESSING in the apply's transaction, so
 * that its outcome commits with its revisions (a retried apply finds it
 * finished); false when it had ended already (an operator's stop recorded
 * first). finished_at is the clock's time, not the start of the transaction.
 */
export async function finishBatch(
  db: Queryable,
  batchId: string,
  status: 'COMPLETED' | 'FAILED',
  result: BatchResult | null,
  error?: string,
): Promise<boolean> {
  return endWithJson(db, batchId, status, result === null ? null : JSON.stringify(result), error ?? null);
}

async function endWithJson(
  db: Queryable,
  batchId: string,
  status: 'COMPLETED' | 'FAILED',
  resultJson: string | null,
  error: string | null,
): Promise<boolean> {
  const updated = await db.query(`update batch set status = $2, result = $3, error = $4, ${ENDED} ${STILL_RUNNING_ROW}`, [
    batchId,
    status,
    resultJson,
    error,
  ]);
  return updated.rowCount === 1;
}

const ENDED = `finished_at = clock_timestamp(),
  changes_applied = case when $2 = 'COMPLETED' then coalesce(changes_total, changes_applied) else changes_applied end`;
const STILL_RUNNING_ROW = `where id = $1 and status in ('ACCEPTED', 'PROCESSING')`;

/**
 * What the apply ends a batch with: a failure document as JSON text, or a
 * success whose revision lines are staged in the transaction
 * (db/apply/result-lines.ts), its document built by PostgreSQL.
 */
export type ResultJson =
  { resultJson(): Iterable<string>; revisions: number } | { stagedSuccess: { transactionUuid: string }; revisions: number };

/**
 * finishBatch for the apply's result, on the apply's connection. A large
 * success's document (60 MB for 300,000 entities) is built by PostgreSQL
 * from the lines staged in the transaction: the worker never holds it.
 */
export async function finishBatchWithResult(
  client: pg.PoolClient,
  batchId: string,
  status: 'COMPLETED' | 'FAILED',
  result: ResultJson,
): Promise<boolean> {
  if ('stagedSuccess' in result) {
    // The lines never come back to the worker: the document is built where they are.
    const updated = await client.query(
      `update batch set status = $2, result = ${STAGED_SUCCESS_JSONB}, error = null, ${ENDED} ${STILL_RUNNING_ROW}`,
      [batchId, status, result.stagedSuccess.transactionUuid],
    );
    return updated.rowCount === 1;
  }
  return endWithJson(client, batchId, status, [...result.resultJson()].join(''), null);
}
