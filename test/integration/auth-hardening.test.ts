import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { elzaHeaders, ndaDate, elzaSignature, elzaDataToHash } from '../support/nda-signer.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';

// Signed requests hardened around the real scheme: per-key source address
// allow-lists (checked before the signature), the client's address taken
// from X-Forwarded-For only behind a trusted proxy, a per-key clock-skew
// window, and failed authentication throttled per source address.

const KEYS = {
  office: { keyId: 'key-office', secret: 'key-office-secret-0123456789abcdef0123' },
  loopback: { keyId: 'key-loopback', secret: 'key-loopback-secret-0123456789abcdef01' },
  strictClock: { keyId: 'key-strict-clock', secret: 'key-strict-clock-secret-0123456789abcd' },
};

describe('signed requests around the scheme', () => {
  let harness: Harness;
  let direct: Harness;
  const path = '/api/v2/entities/999999991';

  beforeAll(async () => {
    const apiKeys = JSON.stringify([
      { name: 'office', ...KEYS.office, permissions: ['read'], allowFrom: ['10.20.0.0/16'] },
      { name: 'loopback', ...KEYS.loopback, permissions: ['read'], allowFrom: ['127.0.0.1', '::1'] },
      { name: 'strict-clock', ...KEYS.strictClock, permissions: ['read'], clockSkewSeconds: 10 },
    ]);
    // One API behind a proxy on loopback (X-Forwarded-For names the client), one without any.
    harness = await startHarness({
      worker: false,
      env: { API_KEYS: apiKeys, TRUSTED_PROXIES: '127.0.0.1/32,::1', AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '600' },
    });
    direct = await startHarness({ worker: false, env: { API_KEYS: apiKeys } });
    await harness.sql(`delete from submission_rate where principal like 'auth-failure:%'`);
  });
  afterAll(async () => {
    await harness?.close();
    await direct?.close();
  });

  const signed = (api: Harness, key: { keyId: string; secret: string }, extra: Record<string, string> = {}, at?: Date) =>
    fetch(`${api.baseUrl}${path}`, {
      headers: { ...elzaHeaders(key, { host: '127.0.0.1', method: 'GET', pathAndQuery: path, ...(at ? { at } : {}) }), ...extra },
    });

  it('takes a key only from the addresses it allows, the client being named by a trusted proxy alone', async () => {
    expect((await signed(harness, KEYS.office, { 'x-forwarded-for': '10.20.3.4' })).status).toBe(404);
    const outside = await signed(harness, KEYS.office, { 'x-forwarded-for': '10.21.3.4' });
    expect(outside.status).toBe(401);
    // Refused as any bad signature is: nothing tells a key that exists from one that does not.
    expect(((await outside.json()) as { properties: { reason: string } }).properties.reason).toBe('SignatureMismatch');
    // The client put its own address in front of the proxy's entry: the proxy's (rightmost) entry decides.
    expect((await signed(harness, KEYS.office, { 'x-forwarded-for': '10.20.3.4, 192.0.2.7' })).status).toBe(401);
    // Without trusted proxies the header is the client's word: ignored.
    expect((await signed(direct, KEYS.office, { 'x-forwarded-for': '10.20.3.4' })).status).toBe(401);
    expect((await signed(direct, KEYS.loopback, { 'x-forwarded-for': '10.20.3.4' })).status).toBe(404);
  });

  it('answers an unknown key id exactly as a wrong signature', async () => {
    const date = ndaDate(new Date());
    const dataToHash = elzaDataToHash({ host: '127.0.0.1', method: 'GET', pathAndQuery: path, date });
    const unknown = await fetch(`${direct.baseUrl}${path}`, {
      headers: {
        'x-nda-date': date,
        authorization: `NDA-HMAC-SHA256 KeyId=no-such-key,Signature=${elzaSignature('x'.repeat(40), dataToHash)}`,
      },
    });
    const wrong = await fetch(`${direct.baseUrl}${path}`, {
      headers: {
        'x-nda-date': date,
        authorization: `NDA-HMAC-SHA256 KeyId=${KEYS.loopback.keyId},Signature=${elzaSignature('x'.repeat(40), dataToHash)}`,
      },
    });
    const [a, b] = (await Promise.all([unknown.json(), wrong.json()])) as { properties: { reason: string }; detail: string }[];
    expect(a!.properties.reason).toBe(b!.properties.reason);
    expect(a!.detail.replace('no-such-key', 'K')).toBe(b!.detail.replace(KEYS.loopback.keyId, 'K'));
  });

  it('holds each key to its own clock-skew window', async () => {
    const minuteAgo = new Date(Date.now() - 60_000);
    expect((await signed(direct, KEYS.loopback, {}, minuteAgo)).status).toBe(404);
    const strict = await signed(direct, KEYS.strictClock, {}, minuteAgo);
    expect(strict.status).toBe(401);
    expect(((await strict.json()) as { properties: { reason: string } }).properties.reason).toBe('DateOutsideWindow');
  });

  it('throttles failed authentication per source address, and only the failures', async () => {
    const bad = (address: string) =>
      fetch(`${harness.baseUrl}${path}`, {
        headers: { authorization: 'Bearer not-a-token-00000000000000000000', 'x-forwarded-for': address },
      });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt += 1) statuses.push((await bad('198.51.100.9')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const throttled = await bad('198.51.100.9');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The same address with valid credentials, and another address's failure, are answered as before.
    expect(
      (
        await fetch(`${harness.baseUrl}${path}`, {
          headers: { authorization: `Bearer ${TEST_TOKENS.read}`, 'x-forwarded-for': '198.51.100.9' },
        })
      ).status,
    ).toBe(404);
    expect((await bad('198.51.100.10')).status).toBe(401);
  });
});
