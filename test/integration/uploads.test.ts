// Streamed uploads: a batch body is validated and stored as it
// arrives. A body of several slices and chunks is accepted and applied; one
// found invalid late, or cut off by its client, leaves nothing behind; and
// the API stays healthy. Bodies are sent chunked, from the generator. One
// principal's trickled uploads leave another's a large slot, and a client
// that waits for 100 Continue is refused before it sends its body.
import { createHash, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBatch } from '../../domain/xml/index.ts';
import { generateCreates } from '../../bench/lib/generate.ts';
import { uploadActivity } from '../../api/upload-slots.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { chunkedPost } from '../support/chunked-post.ts';
import { eventually } from '../support/poll.ts';
import { trickledBatches } from '../support/trickled-batches.ts';

const MIB = 1024 * 1024;
/** About 3.3 MB: two validation slices, four stored chunks. */
const ENTITIES = 2_000;

interface Sent {
  status: number;
  answer: string;
  bytes: number;
  sha256: string;
}

interface StreamOptions {
  uuid: string;
  seed: number;
  /** Text put in place of the closing tag of the change that ends past this many bytes. */
  inject?: { afterBytes: number; text: string };
  /** Destroys the request once this many bytes are sent. */
  abortAfterBytes?: number;
}

/** POSTs a generated batch in 64 KiB chunks (transfer-encoding chunked), as the generator writes it. */
async function streamBatch(harness: Harness, options: StreamOptions): Promise<Sent> {
  const hash = createHash('sha256');
  const post = chunkedPost(new URL('/api/v2/batches', harness.baseUrl), {
    'content-type': 'application/xml',
    authorization: `Bearer ${TEST_TOKENS.admin}`,
  });
  const header = { version: 'v2' as const, batchUuid: options.uuid, sender: { id: 'u-1', name: 'Jana Nováková' } };
  const commands = generateCreates(ENTITIES, {
    seed: options.seed,
    localIdPrefix: `s${options.seed}e`,
    entityType: `UPLOAD-${options.seed}`,
  });
  let bytes = 0;
  let pending = '';
  let injected = options.inject === undefined;
  for await (let text of writeBatch(header, commands, 'v2')) {
    if (!injected && bytes + pending.length > options.inject!.afterBytes && text.includes('</createEntity>')) {
      text = text.replace('</createEntity>', options.inject!.text);
      injected = true;
    }
    pending += text;
    if (pending.length < 64 * 1024) continue;
    const chunk = Buffer.from(pending);
    pending = '';
    bytes += chunk.length;
    hash.update(chunk);
    await post.write(chunk);
    if (options.abortAfterBytes !== undefined && bytes >= options.abortAfterBytes) {
      post.request.destroy();
      await post.answered.catch(() => undefined);
      return { status: 0, answer: '', bytes, sha256: '' };
    }
  }
  const last = Buffer.from(pending);
  bytes += last.length;
  hash.update(last);
  post.request.end(last);
  return { ...(await post.answered), bytes, sha256: hash.digest('hex') };
}

describe('streamed uploads', () => {
  let harness: Harness;
  const count = async (sql: string, params: unknown[] = []) => Number((await harness.sql<{ n: string }>(sql, params))[0]!.n);
  const chunks = () => count('select count(*) as n from batch_body_chunk');
  /** Sessions of this database still inside a transaction: an upload's must be gone once it is answered or abandoned. */
  const openUploads = () =>
    count(
      `select count(*) as n from pg_stat_activity where datname = current_database() and query ilike 'copy batch_body_chunk%' and state <> 'idle'`,
    );

  beforeAll(async () => {
    // Two large slots (one per principal at most); no minimum rate, so a trickle keeps its slot as long as it trickles.
    harness = await startHarness({ env: { UPLOAD_MAX_CONCURRENT: '2', UPLOAD_MIN_BYTES_PER_SECOND: '0' } });
    await harness.sql(`delete from long_read_lease where principal like 'upload:%'`);
  });
  afterAll(async () => {
    await harness?.close();
  });

  it(
    'accepts and applies a body of several slices and chunks, stored byte for byte; the same body again is a 409',
    { timeout: 180_000 },
    async () => {
      const uuid = randomUUID();
      const sent = await streamBatch(harness, { uuid, seed: 1 });
      expect(sent.status, sent.answer).toBe(200);
      expect(JSON.parse(sent.answer)).toBe(uuid);
      expect(sent.bytes).toBeGreaterThan(3 * MIB);

      const pool = harness.db.pool;
      const { rows } = await pool.query<{ body_sha256: string; changes_total: number; bytes: string }>(
        'select b.body_sha256, b.changes_total, bb.bytes from batch b join batch_body bb on bb.batch_id = b.id where b.id = $1',
        [uuid],
      );
      expect(rows[0]).toEqual({ body_sha256: sent.sha256, changes_total: ENTITIES, bytes: String(sent.bytes) });
      const stored = createHash('sha256');
      let parts = 0;
      for await (const part of harness.db.batches.readBody(uuid)) {
        stored.update(part);
        parts += 1;
      }
      expect(stored.digest('hex')).toBe(sent.sha256);
      expect(parts).toBe(Math.ceil(sent.bytes / MIB));

      const ended = await eventually(async () => {
        const detail = (await (await harness.api(`/api/v2/batches/${uuid}/detail`)).json()) as { status: string };
        return detail.status === 'COMPLETED' || detail.status === 'FAILED' ? detail : undefined;
      }, 150_000);
      expect(ended.status, JSON.stringify(ended)).toBe('COMPLETED');
      expect(await count('select count(*) as n from revision where batch_id = $1', [uuid])).toBe(ENTITIES);

      const again = await streamBatch(harness, { uuid, seed: 1 });
      expect(again.status).toBe(409);
      expect(JSON.parse(again.answer)).toMatchObject({ code: 'BatchAlreadyExists' });
    },
  );

  it.each([
    ['a schema error', '</createEntity><createEntity localId="late" entityType=""/>', 'SchemaViolation', /entityType.*minLength/],
    ['malformed XML', '</createEntiti>', 'InvalidXml', /mismatch/],
  ])('answers 400 for %s near the end of a large body and stores nothing', { timeout: 120_000 }, async (kind, text, code, message) => {
    const before = await chunks();
    const uuid = randomUUID();
    const sent = await streamBatch(harness, { uuid, seed: 2, inject: { afterBytes: 3 * MIB, text } });
    expect(sent.status, sent.answer).toBe(400);
    const problem = JSON.parse(sent.answer) as { code: string; errors: { line: number; column: number; message: string }[] };
    expect(problem.code).toBe(code);
    expect(problem.errors[0]!.message).toMatch(message);
    // The generator writes the batch on one line: the schema error is placed exactly, past the first slice.
    if (kind === 'a schema error') expect(problem.errors[0]).toMatchObject({ line: 2, column: expect.any(Number) });
    if (kind === 'a schema error') expect(problem.errors[0]!.column).toBeGreaterThan(2 * MIB);
    expect(await count('select count(*) as n from batch where id = $1', [uuid])).toBe(0);
    expect(await chunks()).toBe(before);
    // A COPY still open is ended by closing its connection; its server process leaves a moment later.
    await eventually(async () => ((await openUploads()) === 0 ? true : undefined));
  });

  it('takes one of two identical uploads sent at once (the other 409) and stores its body once', { timeout: 120_000 }, async () => {
    const uuid = randomUUID();
    const answers = await Promise.all([streamBatch(harness, { uuid, seed: 4 }), streamBatch(harness, { uuid, seed: 4 })]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const stored = await count(
      'select count(*) as n from batch_body_chunk c join batch_body b on b.upload_id = c.upload_id where b.batch_id = $1',
      [uuid],
    );
    expect(stored).toBe(Math.ceil(answers[0]!.bytes / MIB));
    expect(await openUploads()).toBe(0);
  });

  it('stores nothing of an upload its client abandons midway, and stays healthy', { timeout: 120_000 }, async () => {
    const before = await chunks();
    const uuid = randomUUID();
    await streamBatch(harness, { uuid, seed: 3, abortAfterBytes: 2 * MIB });
    // The API notices the connection gone, drops the transaction with its chunks and frees the upload slot.
    await eventually(async () => ((await openUploads()) === 0 ? true : undefined));
    expect(await count('select count(*) as n from batch where id = $1', [uuid])).toBe(0);
    expect(await chunks()).toBe(before);
    expect((await harness.api('/health')).status).toBe(200);

    const next = await streamBatch(harness, { uuid, seed: 3 });
    expect(next.status, next.answer).toBe(200);
    expect(
      await count('select count(*) as n from batch_body_chunk c join batch_body b on b.upload_id = c.upload_id where b.batch_id = $1', [
        uuid,
      ]),
    ).toBe(Math.ceil(next.bytes / MIB));
  });

  it("accepts another principal's ordinary large batch while one writer trickles four chunked uploads", { timeout: 120_000 }, async () => {
    const trickles = trickledBatches(harness.baseUrl, TEST_TOKENS.write, 4, 500);
    try {
      // Every trickle has reached the large slots: holding one or waiting for one.
      await eventually(async () => {
        const { large } = uploadActivity(harness.db);
        return large.inUse + large.waiting === 4 ? true : undefined;
      });
      // About 2 MB, declared: a large upload, from another principal.
      const ordinary = batchXml(Array.from({ length: 5_000 }, (_, n) => create(`o${n}`, `Běžný Záznam ${n} ${randomUUID()}`)));
      expect(Buffer.byteLength(ordinary)).toBeGreaterThan(MIB);
      const accepted = await harness.api('/api/v2/batches', {
        method: 'POST',
        as: 'admin',
        headers: { 'content-type': 'application/xml' },
        body: ordinary,
        signal: AbortSignal.timeout(60_000),
      });
      expect(accepted.status, await accepted.clone().text()).toBe(200);
      // Every trickle still open: the batch did not get a slot by one of them ending. The writer held its share, one.
      expect(trickles.map((trickle) => trickle.isOver())).toEqual([false, false, false, false]);
      expect(uploadActivity(harness.db).large).toMatchObject({ inUse: 1, waiting: 3 });
    } finally {
      for (const trickle of trickles) trickle.stop();
    }
    await eventually(async () => (uploadActivity(harness.db).large.inUse === 0 ? true : undefined));
  });

  it('answers a request that expects 100-continue with its refusal instead, and tells an admitted one to continue', async () => {
    const { hostname, port } = new URL(harness.baseUrl);
    /** Sends the head of a POST that waits for 100 Continue, and resolves the first status line it gets back. */
    const firstStatus = (token: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname);
        let received = '';
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('latin1');
          const line = /^HTTP\/1\.1 \d{3}[^\r]*\r\n/.exec(received);
          if (line) {
            resolve(line[0].trim());
            socket.destroy();
          }
        });
        socket.on('error', reject);
        socket.write(
          `POST /api/v2/batches HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/xml\r\nContent-Length: 5000000\r\nExpect: 100-continue\r\n\r\n`,
        );
      });
    // Refused (no such token) before a byte of the body: the refusal comes, not 100 Continue.
    expect(await firstStatus('not-a-token-of-this-service-0000')).toBe('HTTP/1.1 401 Unauthorized');
    // Admitted: its body is about to be read.
    expect(await firstStatus(TEST_TOKENS.admin)).toBe('HTTP/1.1 100 Continue');
    await eventually(async () => (uploadActivity(harness.db).large.inUse === 0 ? true : undefined));
  });
});
