import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadActivity } from '../../api/upload-slots.ts';
import { writeGeneratedBatch } from '../../bench/lib/generate.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';
import { trickledBatches } from '../support/trickled-batches.ts';

// One writer stalls or trickles uploads: it gets at most UPLOADS_PER_PRINCIPAL
// of them in progress (the rest 429 with Retry-After, readable by a client
// that writes its whole body first), a body that stops arriving or arrives
// below the minimum rate is cut and leaves nothing, and another principal's
// saves meanwhile complete.

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
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        // A refusal's rest of the body would be read and thrown away: the writer hangs up instead.
        if (/^HTTP\/1\.1 \d{3}[^]*\r\n\r\n/.test(received)) socket.destroy();
      });
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

describe('trickled uploads and refusals a client can read', () => {
  let harness: Harness;
  let scratch: string;
  beforeAll(async () => {
    // A minimum of 1 KiB/s over 2 s windows: a byte every 200 ms is far below it.
    harness = await startHarness({
      env: { UPLOADS_PER_PRINCIPAL: '8', UPLOAD_MIN_BYTES_PER_SECOND: '1024', UPLOAD_MIN_RATE_WINDOW_SECONDS: '2' },
    });
    await harness.sql(`delete from long_read_lease where principal like 'upload:%'`);
    scratch = await mkdtemp(join(tmpdir(), 'abuse-uploads-'));
  });
  afterAll(async () => {
    await harness?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('cuts uploads trickled below the minimum rate, answering 400 and storing nothing, while another principal saves', async () => {
    const before = await harness.sql(`select 1 from batch where submitted_by = 'test-writer'`);
    const cutBefore = uploadActivity(harness.db).cut.slow;
    const trickles = trickledBatches(harness.baseUrl, TEST_TOKENS.write, 4, 200);
    try {
      for (let n = 0; n < 3; n += 1) {
        const save = await harness.api('/api/v2/batches', {
          method: 'POST',
          as: 'admin',
          headers: { 'content-type': 'application/xml' },
          body: batchXml([create('a', `Ordinary ${randomUUID()}`)]),
        });
        expect(save.status).toBe(200);
        expect((await batchEnded(harness, (await save.json()) as string)).status).toBe('COMPLETED');
      }
      const ends = await Promise.all(trickles.map((trickle) => trickle.ended));
      expect(ends.map((end) => end?.status)).toEqual([400, 400, 400, 400]);
      for (const end of ends)
        expect(JSON.parse(end!.answer)).toMatchObject({ code: 'BadRequest', detail: expect.stringMatching(/below the minimum/) });
    } finally {
      for (const trickle of trickles) trickle.stop();
    }
    expect(uploadActivity(harness.db).cut.slow - cutBefore).toBe(4);
    expect(await harness.sql(`select 1 from batch where submitted_by = 'test-writer'`)).toHaveLength(before.length);
    await eventually(async () => (uploadActivity(harness.db).large.inUse === 0 ? true : undefined));
  });

  it(
    'lets a client that writes its whole body before reading see the 429 of its uploads over the limit',
    { timeout: 300_000 },
    async () => {
      // Ten 7 MB batches at once by one writer whose limit is 8, sent by Python's urllib, which reads nothing before its body is sent.
      const files = await Promise.all(
        Array.from({ length: 10 }, async (_, n) => {
          const path = join(scratch, `upload-${n}.xml`);
          await writeGeneratedBatch(path, 4_300, { seed: 500 + n, localIdPrefix: `r${n}e`, entityType: `REFUSALS-${n}` });
          return path;
        }),
      );
      const { stdout } = await promisify(execFile)(
        'python3',
        ['-c', URLLIB_UPLOADS, new URL('/api/v2/batches', harness.baseUrl).href, TEST_TOKENS.write, ...files],
        {
          timeout: 280_000,
        },
      );
      const outcomes = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { status?: number; retryAfter?: string; error?: string });
      expect(outcomes.filter((outcome) => outcome.error !== undefined)).toEqual([]);
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
      for (const refused of outcomes.filter((outcome) => outcome.status === 429))
        expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    },
  );
});

/** Python: POSTs each file given at once, one thread each, and prints one JSON line per upload: its status and Retry-After, or its error. */
const URLLIB_UPLOADS = `
import json, sys, threading, urllib.error, urllib.request
url, token, files = sys.argv[1], sys.argv[2], sys.argv[3:]
lock = threading.Lock()
def upload(path):
    with open(path, 'rb') as f:
        body = f.read()
    request = urllib.request.Request(url, data=body, method='POST', headers={'Authorization': 'Bearer ' + token, 'Content-Type': 'application/xml'})
    try:
        with urllib.request.urlopen(request, timeout=240) as response:
            outcome = {'status': response.status}
    except urllib.error.HTTPError as error:
        outcome = {'status': error.code, 'retryAfter': error.headers.get('Retry-After')}
    except Exception as error:
        outcome = {'error': type(error).__name__ + ': ' + str(error)}
    with lock:
        print(json.dumps(outcome), flush=True)
threads = [threading.Thread(target=upload, args=(path,)) for path in files]
for thread in threads: thread.start()
for thread in threads: thread.join()
`;
