import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { elzaHeaders, type TestKey } from '../support/nda-signer.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';

// A captured signed write sent again with a body of the attacker's, within
// the signature's window: counted (and logged) for an ordinary key, where two
// archivists saving in one second under it look the same; refused for a key
// marked singleWriter. The same body sent again is a retry, not another body.
// An ordinary client's saves meanwhile all complete.

const SHARED_KEY: TestKey = { keyId: 'abuse-shared', secret: 'abuse-shared-secret-0123456789abcdef0123' };
const SINGLE_KEY: TestKey = { keyId: 'abuse-single', secret: 'abuse-single-secret-0123456789abcdef0123' };

describe('a signed write replayed with another body', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      env: {
        API_KEYS: JSON.stringify([
          { name: 'archive-shared', ...SHARED_KEY, permissions: ['read', 'write', 'export'] },
          { name: 'archive-single', ...SINGLE_KEY, permissions: ['read', 'write', 'export'], singleWriter: true },
        ]),
      },
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** Signs once, then sends any body under that one signature, as a captured request is replayed. */
  const captured = (key: TestKey, path: string, contentType: string, at?: Date) => {
    const headers = {
      ...elzaHeaders(key, { host: '127.0.0.1', method: 'POST', pathAndQuery: path, ...(at ? { at } : {}) }),
      'content-type': contentType,
    };
    return (body: string) => fetch(`${harness.baseUrl}${path}`, { method: 'POST', headers, body });
  };
  const reused = async (outcome: 'accepted' | 'refused') => {
    const text = await (await fetch(`${harness.baseUrl}/metrics`, { headers: metricsAuthorization(harness.config) })).text();
    return Number(new RegExp(`^signed_write_signature_reused_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  };
  const batchRows = async (uuid: string) => (await harness.sql('select id from batch where id = $1', [uuid])).length;
  const ordinarySave = () =>
    harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'write',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('o', `Ordinary ${randomUUID()}`)]),
    });

  it('counts another body under an ordinary key and accepts it; a retry of the same body is no other body', async () => {
    const send = captured(SHARED_KEY, '/api/v2/batches', 'application/xml');
    const [first, second] = [randomUUID(), randomUUID()];
    const before = await reused('accepted');
    const originalBody = batchXml([create('a', `Original ${first}`)], { uuid: first });
    const original = await send(originalBody);
    expect(original.status).toBe(200);
    const ordinary = ordinarySave();
    const other = await send(batchXml([create('b', `Other ${second}`)], { uuid: second }));
    expect(other.status).toBe(200);
    expect((await batchEnded(harness, second)).status).toBe('COMPLETED');
    expect(await reused('accepted')).toBe(before + 1);
    // The first body again: a duplicate as always (409), and not counted as another body.
    expect((await send(originalBody)).status).toBe(409);
    expect(await reused('accepted')).toBe(before + 1);
    expect((await batchEnded(harness, first)).status).toBe('COMPLETED');
    const saved = await ordinary;
    expect(saved.status).toBe(200);
    expect((await batchEnded(harness, (await saved.json()) as string)).status).toBe('COMPLETED');
  });

  it('refuses another body under a single-writer key, for v2 and v1 batches and export starts, storing nothing', async () => {
    const before = await reused('refused');
    const ordinary = ordinarySave();

    const v2 = captured(SINGLE_KEY, '/api/v2/batches', 'application/xml');
    const [kept, hijack] = [randomUUID(), randomUUID()];
    const keptBody = batchXml([create('k', `Kept ${kept}`)], { uuid: kept });
    expect((await v2(keptBody)).status).toBe(200);
    const refused = await v2(batchXml([create('h', `Hijack ${hijack}`)], { uuid: hijack }));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(((await refused.json()) as { properties: { reason: string } }).properties.reason).toBe('SignatureReused');
    expect(await batchRows(hijack)).toBe(0);
    // The same body again is the client's own retry: the duplicate answer, not a refusal of the signature.
    expect((await v2(keptBody)).status).toBe(409);
    expect((await batchEnded(harness, kept)).status).toBe('COMPLETED');

    const v1 = captured(SINGLE_KEY, '/api/v1/batches', 'application/xml');
    const [v1Kept, v1Hijack] = [randomUUID(), randomUUID()];
    expect((await v1(batchXml([create('k', `Kept v1 ${v1Kept}`)], { uuid: v1Kept, version: 'v1' }))).status).toBe(200);
    expect((await v1(batchXml([create('h', `Hijack v1 ${v1Hijack}`)], { uuid: v1Hijack, version: 'v1' }))).status).toBe(401);
    expect(await batchRows(v1Hijack)).toBe(0);

    const exportStart = captured(SINGLE_KEY, '/api/v2/export/snapshots', 'application/json');
    const started = await exportStart('[999999991]');
    expect(started.status).toBe(200);
    const exportId = await started.text();
    const exportsBefore = (await harness.sql(`select id from export_request where requested_by = 'archive-single'`)).length;
    expect((await exportStart('[999999992]')).status).toBe(401);
    // The same body again is answered with the first export, as before.
    const again = await exportStart('[999999991]');
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(exportId);
    expect((await harness.sql(`select id from export_request where requested_by = 'archive-single'`)).length).toBe(exportsBefore);

    expect(await reused('refused')).toBe(before + 3);
    const saved = await ordinary;
    expect(saved.status).toBe(200);
    expect((await batchEnded(harness, (await saved.json()) as string)).status).toBe('COMPLETED');
  });

  it('lets exactly one of two bodies racing under one signature of a single-writer key through', async () => {
    // A signature of its own (signed 30 s ahead, inside the window), seen by no earlier scenario.
    const send = captured(SINGLE_KEY, '/api/v2/batches', 'application/xml', new Date(Date.now() + 30_000));
    const ids = [randomUUID(), randomUUID()];
    const answers = await Promise.all(ids.map((uuid) => send(batchXml([create('r', `Race ${uuid}`)], { uuid }))));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
    const rows = await Promise.all(ids.map(batchRows));
    expect(rows.sort()).toEqual([0, 1]);
  });
});
