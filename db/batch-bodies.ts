import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { CopyIn } from './copy.ts';
import type { Queryable } from './sql.ts';

// The stored bodies of batches, in rows of BODY_CHUNK_BYTES (batch_body_chunk)
// named by one batch_body row per batch. Written by binary COPY as an upload
// arrives, in the upload's transaction: SQL on MikroORM's pool, as the
// EntityManager has no COPY.

/** A body already written by a BodyWriter in the caller's transaction. */
export interface StoredBody {
  uploadId: string;
  bytes: number;
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
  #copy: CopyIn | undefined;
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
    return this.#copy !== undefined && !this.#finished;
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
    await (this.#copy as CopyIn).end(COPY_TRAILER);
    this.#finished = true;
    return { uploadId: this.uploadId, bytes: this.#bytes };
  }

  async #flush(): Promise<void> {
    const first = this.#copy === undefined;
    this.#copy ??= new CopyIn(await this.#connect(), 'copy batch_body_chunk (upload_id, seq, data) from stdin (format binary)');
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
    await this.#copy.write(row);
  }
}

/** Links the body an upload wrote (or writes `body` now) to batch `batchId`, replacing an earlier attempt's body, in the caller's transaction. */
export async function linkBatchBody(client: pg.PoolClient, batchId: string, body: Buffer | StoredBody): Promise<void> {
  let stored: StoredBody;
  if (Buffer.isBuffer(body)) {
    const writer = new BodyWriter(async () => client);
    await writer.write(body);
    stored = await writer.finish();
  } else {
    stored = body;
  }
  // An earlier attempt's body goes, its chunks with it (cascade).
  await client.query('delete from batch_body where batch_id = $1', [batchId]);
  await client.query('insert into batch_body (batch_id, upload_id, bytes) values ($1, $2, $3)', [batchId, stored.uploadId, stored.bytes]);
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
