import type pg from 'pg';
import type { XmlVersion } from '../domain/model.ts';
import { BodyWriter, linkBatchBody, type StoredBody } from './batch-bodies.ts';
import { claimSignedRequest, type SignedRequest } from './replay-guard.ts';
import type { Queryable } from './sql.ts';

// A batch upload's one transaction: its body chunks (binary COPY as the body
// arrives), its duplicate check and its batch row commit together or not at
// all. SQL on one connection of MikroORM's pool: the EntityManager has no
// COPY, and its transactions cannot take over a pg client.

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
  /**
   * Whether a FAILED batch of the same id submitted by another principal may
   * be revived (the submitter holds force, or offers that batch's force key);
   * otherwise only its own submitter revives it.
   */
  reviveOthers?: boolean;
}

export class BatchUpload {
  readonly #writer: BodyWriter;
  #client: pg.PoolClient | undefined;

  constructor(pool: pg.Pool) {
    this.#writer = new BodyWriter(async () => {
      const client = await pool.connect();
      this.#client = client;
      await client.query('begin');
      return client;
    });
  }

  /** Stores the next piece of the body; the transaction begins once there is a row of chunk to write. */
  write(chunk: Uint8Array): Promise<void> {
    return this.#writer.write(chunk);
  }

  /** Ends the body's COPY: the body is then in the upload's transaction. */
  finish(): Promise<StoredBody> {
    return this.#writer.finish();
  }

  /**
   * Claims the signed request that carries this body, in the upload's
   * transaction (db/replay-guard.ts): it commits with the batch, and a refusal
   * by `request.onOtherBody` leaves nothing.
   */
  async claimSignature(request: SignedRequest, batchId: string): Promise<void> {
    await claimSignedRequest(this.#transaction(), request, batchId);
  }

  /** Another batch with the same body that completed or is still running. */
  findLiveWithBody(sha256: string, exceptId: string): Promise<string | undefined> {
    return findLiveBatchWithBody(this.#transaction(), sha256, exceptId);
  }

  /** The batch row for the finished body (storeBatch); false when the id is taken by a batch that is not FAILED. */
  store(batch: Omit<NewBatch, 'body'>, body: StoredBody): Promise<boolean> {
    return storeBatch(this.#transaction(), { ...batch, body });
  }

  async commit(): Promise<void> {
    await this.#transaction().query('commit');
    this.#end();
  }

  /** Ends the transaction without its chunks; nothing is left behind. A COPY still open can only be ended with its connection. */
  async discard(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    this.#client = undefined;
    if (this.#writer.copying) {
      client.release(true);
      return;
    }
    await client.query('rollback').catch(() => undefined);
    client.release();
  }

  #transaction(): pg.PoolClient {
    if (this.#client === undefined) throw new Error('the upload has no open transaction: finish() its body first');
    return this.#client;
  }

  #end(): void {
    this.#client?.release();
    this.#client = undefined;
  }
}

/**
 * Inserts the batch, or revives a FAILED batch of the same id for another
 * attempt, with its body, in the caller's transaction (an upload's, whose
 * body chunks were COPYed there). Returns false when the id is taken by a
 * batch that completed or is still running, or by another principal's FAILED
 * batch the caller may not revive: the caller answers 409 (and rolls back
 * the chunks it wrote).
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
     where batch.status = 'FAILED' and ($8 or batch.submitted_by = excluded.submitted_by)`,
    [
      batch.id,
      batch.sha256,
      batch.apiVersion,
      batch.submittedBy,
      batch.force,
      batch.offeredForceKey ?? null,
      batch.changesTotal,
      batch.reviveOthers ?? false,
    ],
  );
  if (inserted.rowCount === 0) return false;
  await linkBatchBody(client, batch.id, batch.body);
  return true;
}

/** Another batch with the same body that completed or is still running, as the caller's connection sees it. */
export async function findLiveBatchWithBody(db: Queryable, sha256: string, exceptId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `select id from batch where body_sha256 = $1 and id <> $2 and status <> 'FAILED' limit 1`,
    [sha256, exceptId],
  );
  return rows[0]?.id;
}
