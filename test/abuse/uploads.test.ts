import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';

// One writer trickles uploads: it gets at most UPLOADS_PER_PRINCIPAL of them
// in progress (the rest 429 with Retry-After), a body that stops arriving is
// cut and leaves nothing, and another principal's saves meanwhile complete.

describe('uploads bounded per principal', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ env: { UPLOADS_PER_PRINCIPAL: '2', UPLOAD_IDLE_SECONDS: '2' } });
    await harness.sql(`delete from long_read_lease where principal like 'upload:%'`);
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** A chunked POST that sends the start of a batch and then nothing: resolves its status (undefined when cut). */
  function stalledUpload(): Promise<{ status: number | undefined; retryAfter: string | undefined }> {
    const { hostname, port } = new URL(harness.baseUrl);
    const xml = batchXml([create('a', `Stalled ${randomUUID()}`)]);
    const start = xml.slice(0, Math.floor(xml.length / 2));
    return new Promise((resolve) => {
      const socket = connect(Number(port), hostname);
      socket.write(
        `POST /api/v2/batches HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${TEST_TOKENS.write}\r\nContent-Type: application/xml\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(start).toString(16)}\r\n${start}\r\n`,
      );
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
        resolve({ status: status === undefined ? undefined : Number(status), retryAfter: /\r\nretry-after: *(\S+)/i.exec(received)?.[1] });
      });
    });
  }

  it('refuses a trickling writer its uploads beyond its limit, cuts the stalled ones, and lets another principal save meanwhile', async () => {
    const before = await harness.sql(`select 1 from batch where submitted_by = 'test-writer'`);
    const stalled = Array.from({ length: 4 }, () => stalledUpload());
    // An archivist's saves, one after another.
    const saves: Response[] = [];
    for (let n = 0; n < 3; n += 1)
      saves.push(
        await harness.api('/api/v2/batches', {
          method: 'POST',
          as: 'admin',
          headers: { 'content-type': 'application/xml' },
          body: batchXml([create('a', `Ordinary ${randomUUID()}`)]),
        }),
      );
    expect(saves.map((save) => save.status)).toEqual([200, 200, 200]);
    for (const save of saves) expect((await batchEnded(harness, (await save.json()) as string)).status).toBe('COMPLETED');

    const ends = await Promise.all(stalled);
    const refused = ends.filter((end) => end.status === 429);
    expect(refused.length).toBe(2);
    expect(refused.every((end) => Number(end.retryAfter) >= 1)).toBe(true);
    // The two admitted were cut when their bodies stopped arriving.
    expect(ends.filter((end) => end.status === undefined).length).toBe(2);
    // Nothing of them was stored, and their slots are free again.
    expect(await harness.sql(`select 1 from batch where submitted_by = 'test-writer'`)).toHaveLength(before.length);
    const after = await harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'write',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', `After ${randomUUID()}`)]),
    });
    expect(after.status).toBe(200);
  });
});
