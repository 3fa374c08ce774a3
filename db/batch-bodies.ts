import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
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

/**
 * The stored body in its chunks, in order, one statement a chunk: a batch of
 * any size never needs one large value, and no connection is held between
 * chunks. Each chunk is read by `COPY … TO STDOUT (FORMAT binary)`, its bytes
 * as they are stored: a bytea column read by a query comes as text, every
 * 1 MiB chunk a 2 MB hex string in V8's large-object space, which only a full
 * collection frees (twice the body's size of such strings per pass).
 */
export async function* readBatchBody(db: Queryable, batchId: string): AsyncGenerator<Buffer> {
  const { rows } = await db.query<{ uploadId: string }>('select upload_id as "uploadId" from batch_body where batch_id = $1', [batchId]);
  const uploadId = rows[0]?.uploadId;
  if (uploadId === undefined) return;
  for (let seq = 0; ; seq += 1) {
    // COPY takes no parameters: the upload id is a uuid read from the database, seq a number.
    const data = await copyOutOneBytea(
      db,
      `select data from batch_body_chunk where upload_id = ${pg.escapeLiteral(uploadId)}::uuid and seq = ${seq}`,
    );
    if (data === undefined) return;
    if (data.length > 0) yield data;
  }
}

/** The one bytea value of the one row of `query`, by binary COPY; undefined when it has no row. */
async function copyOutOneBytea(db: Queryable, query: string): Promise<Buffer | undefined> {
  // A pool lends a connection for the one statement; a client (a transaction's) is used as it is.
  const client = 'release' in db ? db : await db.connect();
  let broken = false;
  try {
    const pieces: Buffer[] = [];
    const stream = client.query(copyTo(`copy (${query}) to stdout (format binary)`));
    for await (const piece of stream as AsyncIterable<Buffer>) pieces.push(piece);
    return binaryCopyOneField(Buffer.concat(pieces));
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    if (client !== db) client.release(broken);
  }
}

/**
 * The one field of the only row of a whole binary COPY's data (its header,
 * at most one row of one non-null field, its trailer), as a view of `data`;
 * undefined when it has no row.
 */
export function binaryCopyOneField(data: Buffer): Buffer | undefined {
  if (data.length < COPY_SIGNATURE.length + 2 || !data.subarray(0, 11).equals(COPY_SIGNATURE.subarray(0, 11)))
    throw new Error('COPY: not a binary COPY header');
  let at = COPY_SIGNATURE.length;
  at += data.readInt32BE(at - 4);
  const fields = data.readInt16BE(at);
  if (fields === -1) return undefined;
  const length = data.readInt32BE(at + 2);
  if (fields !== 1 || length < 0) throw new Error(`COPY: a row of ${fields} fields, the first ${length} bytes long`);
  const end = at + 6 + length;
  if (data.length !== end + 2 || data.readInt16BE(end) !== -1) throw new Error('COPY: not one row');
  return data.subarray(at + 6, end);
}
