import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { binaryCopyOneField, linkBatchBody, readBatchBody } from '../../db/batch-bodies.ts';

// The apply reads a stored body chunk by chunk by binary COPY (no hex text):
// every byte must come back as stored, whether read on the pool or on a
// transaction's connection.

const MIB = 1024 * 1024;

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const chunk of chunks) out.push(Buffer.from(chunk));
  return out;
}

describe('a stored body read back', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: withDatabaseUser(inject('databaseUrl')), max: 2 });
  });
  afterAll(async () => {
    await pool.end();
  });

  async function storeBatch(client: pg.PoolClient, body: Buffer): Promise<string> {
    const batchId = randomUUID();
    await client.query(
      `insert into batch (id, body_sha256, api_version, submitted_by, status) values ($1, 'test', 'v2', 'test', 'ACCEPTED')`,
      [batchId],
    );
    await linkBatchBody(client, batchId, body);
    return batchId;
  }

  it('gives every byte in its 1 MiB chunks, on the pool and on a transaction connection', async () => {
    // Every byte value, at both ends of a chunk and across the last, short one.
    const body = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      randomBytes(2 * MIB),
      Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i)),
    ]);
    const client = await pool.connect();
    let batchId: string;
    try {
      await client.query('begin');
      batchId = await storeBatch(client, body);
      // Uncommitted: only the transaction's own connection sees it.
      const inTransaction = await collect(readBatchBody(client, batchId));
      expect(inTransaction.map((chunk) => chunk.length)).toEqual([MIB, MIB, 512]);
      expect(Buffer.concat(inTransaction).equals(body)).toBe(true);
      expect(await collect(readBatchBody(pool, batchId))).toEqual([]);
      await client.query('commit');
    } finally {
      client.release();
    }
    const onPool = await collect(readBatchBody(pool, batchId));
    expect(Buffer.concat(onPool).equals(body)).toBe(true);
    expect(pool.idleCount).toBe(pool.totalCount);
    await pool.query('delete from batch where id = $1', [batchId]);
  });

  it('gives nothing for an empty body or a batch without one', async () => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const batchId = await storeBatch(client, Buffer.alloc(0));
      expect(await collect(readBatchBody(client, batchId))).toEqual([]);
      expect(await collect(readBatchBody(client, randomUUID()))).toEqual([]);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});

describe('the one field of a binary COPY', () => {
  const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
  const header = (extension: Buffer) => {
    const flags = Buffer.alloc(8);
    flags.writeInt32BE(extension.length, 4);
    return Buffer.concat([SIGNATURE, flags, extension]);
  };
  const row = (bytes: Buffer, fields = 1) => {
    const head = Buffer.alloc(6);
    head.writeInt16BE(fields, 0);
    head.writeInt32BE(bytes.length, 2);
    return Buffer.concat([head, bytes]);
  };
  const TRAILER = Buffer.from([0xff, 0xff]);

  it('is the row’s bytes, after a header extension too', () => {
    const bytes = Buffer.from([0, 1, 0xff, 0xfe, 0x5c]);
    expect(binaryCopyOneField(Buffer.concat([header(Buffer.alloc(0)), row(bytes), TRAILER]))?.equals(bytes)).toBe(true);
    expect(binaryCopyOneField(Buffer.concat([header(Buffer.from('ext')), row(bytes), TRAILER]))?.equals(bytes)).toBe(true);
    expect(binaryCopyOneField(Buffer.concat([header(Buffer.alloc(0)), row(Buffer.alloc(0)), TRAILER]))?.length).toBe(0);
  });

  it('is undefined without a row, and refuses anything else', () => {
    expect(binaryCopyOneField(Buffer.concat([header(Buffer.alloc(0)), TRAILER]))).toBeUndefined();
    expect(() =>
      binaryCopyOneField(Buffer.concat([header(Buffer.alloc(0)), row(Buffer.from('a')), row(Buffer.from('b')), TRAILER])),
    ).toThrow(/not one row/);
    expect(() => binaryCopyOneField(Buffer.concat([header(Buffer.alloc(0)), row(Buffer.from('a'), 2), TRAILER]))).toThrow(/2 fields/);
    expect(() => binaryCopyOneField(Buffer.from('a,b\n'))).toThrow(/header/);
  });
});
