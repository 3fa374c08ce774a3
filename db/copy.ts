import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';

/**
 * One value in COPY's text format: NULL is \N; backslash, newline, carriage
 * return and tab are escaped (the only characters the format reserves).
 */
function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return copyText(value instanceof Date ? value.toISOString() : String(value));
}

/** Text in COPY's text format: each reserved character escaped on its own, so text may be escaped in pieces. */
function copyText(text: string): string {
  return /[\\\n\r\t]/.test(text)
    ? text.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'))
    : text;
}

/** Bytes of a COPY chunk. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Rows for one COPY, already in its text format as UTF-8 bytes: the CPU work,
 * done apart from sending. Bytes, not strings: they are half the size of the
 * two-byte strings that any non-Latin-1 text makes, and live outside V8's
 * heap, so rows waiting to be sent do not make the heap grow.
 */
export interface CopyLoad {
  table: string;
  columns: readonly string[];
  chunks: Buffer[];
}

/**
 * Each row is written as UTF-8 straight into the chunk it goes in (a row
 * never spans two), so no string longer than a row is ever built.
 */
export function encodeCopyLoad(table: string, columns: readonly string[], rows: Iterable<readonly unknown[]>): CopyLoad {
  const chunks: Buffer[] = [];
  let chunk: Buffer | undefined;
  let at = 0;
  for (const row of rows) {
    let line = '';
    for (let index = 0; index < row.length; index += 1) line += index === 0 ? copyValue(row[index]) : `\t${copyValue(row[index])}`;
    line += '\n';
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    const most = line.length * 3;
    if (chunk !== undefined && chunk.length - at < most) {
      chunks.push(filled(chunk, at));
      chunk = undefined;
    }
    if (chunk === undefined) {
      chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, most));
      at = 0;
    }
    at += chunk.write(line, at, 'utf8');
  }
  if (chunk !== undefined && at > 0) chunks.push(filled(chunk, at));
  return { table, columns, chunks };
}

/** The first `bytes` of a chunk: a copy when that is less than half of it, so small loads do not hold whole chunks. */
function filled(chunk: Buffer, bytes: number): Buffer {
  return bytes < chunk.length / 2 ? Buffer.from(chunk.subarray(0, bytes)) : chunk.subarray(0, bytes);
}

/**
 * A COPY FROM STDIN open on the caller's connection (and so inside its
 * transaction): the fastest way PostgreSQL takes rows. Writes wait while the
 * connection's buffer is full; a failed COPY rejects the write or end that
 * meets it. The one COPY-in of the service: the apply's rows, a batch body's
 * chunks as they arrive, a large result document in pieces.
 */
export class CopyIn {
  readonly #stream: CopyStreamQuery;

  constructor(client: pg.PoolClient, statement: string) {
    this.#stream = client.query(copyFrom(statement));
    // Until a write or end meets it, a failure must not go unhandled.
    this.#stream.on('error', () => undefined);
  }

  async write(bytes: Buffer): Promise<void> {
    if (!this.#stream.write(bytes)) await once(this.#stream, 'drain');
  }

  async end(last?: Buffer): Promise<void> {
    if (last === undefined) this.#stream.end();
    else this.#stream.end(last);
    await finished(this.#stream);
  }
}

/** Sends rows already encoded (encodeCopyLoad) on the caller's connection. */
export async function sendCopyLoad(client: pg.PoolClient, load: CopyLoad): Promise<void> {
  if (load.chunks.length === 0) return;
  const copy = new CopyIn(client, `copy ${load.table} (${load.columns.join(', ')}) from stdin`);
  for (const chunk of load.chunks) await copy.write(chunk);
  await copy.end();
}

/**
 * Sends one row per value into one text column, `perPiece` rows a write: a
 * large list of keys is never one string, nor one query message.
 */
export async function copyLinesInPieces(
  client: pg.PoolClient,
  table: string,
  column: string,
  values: readonly string[],
  perPiece = 1000,
): Promise<void> {
  const copy = new CopyIn(client, `copy ${table} (${column}) from stdin`);
  for (let start = 0; start < values.length; start += perPiece) {
    let piece = '';
    for (const value of values.slice(start, start + perPiece)) piece += `${copyText(value)}\n`;
    await copy.write(Buffer.from(piece, 'utf8'));
  }
  await copy.end();
}

/** CopyData ('d') and CopyDone ('c') of the frontend protocol. */
const COPY_DATA = 0x64;
const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]);

/**
 * Several COPY FROM STDIN as ONE simple query whose data is all written at
 * once, before PostgreSQL asks for it: the server takes table after table
 * without waiting for this process between them (with one statement each,
 * every next COPY waited for a turn of this process's event loop, which the
 * apply's planning keeps busy in slices of tens of milliseconds). A
 * pg "submittable": it runs in the client's queue like any query.
 *
 * The protocol allows it: the server reads the messages in order, the data
 * of the n-th COPY once it has begun that COPY; after an error it discards
 * the CopyData and CopyDone still coming (PostgresMain ignores them outside
 * copy mode), skips the rest of the query, and the error rejects here.
 */
class PipelinedCopy {
  readonly #text: string;
  readonly #loads: readonly CopyLoad[];
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (error: unknown) => void;
  #failed = false;

  constructor(loads: readonly CopyLoad[]) {
    this.#loads = loads;
    this.#text = loads.map((load) => `copy ${load.table} (${load.columns.join(', ')}) from stdin`).join(';\n');
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Called by pg when this query's turn comes: the query and every load's data, in one go. */
  submit(connection: { query(text: string): void; stream: NodeJS.WritableStream }): void {
    connection.query(this.#text);
    for (const load of this.#loads) {
      for (const chunk of load.chunks) {
        const header = Buffer.allocUnsafe(5);
        header[0] = COPY_DATA;
        header.writeUInt32BE(chunk.length + 4, 1);
        connection.stream.write(header);
        connection.stream.write(chunk);
      }
      connection.stream.write(COPY_DONE);
    }
  }

  // pg overwrites it for its query timeout; kept for that.
  callback(): void {}

  handleCopyInResponse(): void {
    // The data is on its way already.
  }

  handleCommandComplete(): void {}

  handleError(error: unknown): void {
    this.callback();
    this.#failed = true;
    this.#reject(error);
  }

  handleReadyForQuery(): void {
    this.callback();
    if (!this.#failed) this.#resolve();
  }

  handleEmptyQuery(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handlePortalSuspended(): void {}
}

/**
 * Sends loads already encoded (encodeCopyLoad) on the caller's connection,
 * in this order, as one round trip (PipelinedCopy); empty loads are left out.
 */
export async function sendCopyLoads(client: pg.PoolClient, loads: readonly CopyLoad[]): Promise<void> {
  const sent = loads.filter((load) => load.chunks.length > 0);
  if (sent.length === 0) return;
  const copy = new PipelinedCopy(sent);
  client.query(copy as unknown as pg.QueryConfig);
  await copy.done;
}
