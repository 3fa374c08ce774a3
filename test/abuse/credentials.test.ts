import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { elzaHeaders } from '../support/nda-signer.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';

// Probing with credentials and parameters: fifty bad credentials from one
// address are throttled (429 with Retry-After) while another client's saves
// and reads go on; a key used from outside its allow-list is refused as any
// bad signature is; an unknown query parameter is refused naming it.

const OFFICE_KEY = { keyId: 'abuse-office', secret: 'abuse-office-secret-0123456789abcdef012' };

describe('credentials and parameters', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      env: {
        TRUSTED_PROXIES: '127.0.0.1,::1',
        AUTH_FAILURE_LIMIT: '20',
        AUTH_FAILURE_WINDOW_SECONDS: '600',
        API_KEYS: JSON.stringify([{ name: 'office', ...OFFICE_KEY, permissions: ['read', 'write'], allowFrom: ['10.20.0.0/16'] }]),
      },
    });
    await harness.sql(`delete from submission_rate where principal like 'auth-failure:%'`);
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('throttles fifty bad credentials from one address while an ordinary client saves and reads', async () => {
    const attacker = '203.0.113.50';
    const attempts = Array.from({ length: 50 }, (_, index) =>
      fetch(`${harness.baseUrl}/api/v2/entities/1`, {
        headers: { authorization: `Bearer guess-${index}-${'0'.repeat(32)}`, 'x-forwarded-for': attacker },
      }).then((response) => ({ status: response.status, retryAfter: response.headers.get('retry-after') })),
    );
    const saved = await harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'write',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', `Ordinary ${randomUUID()}`)]),
    });
    const answers = await Promise.all(attempts);
    expect(answers.every((answer) => answer.status === 401 || answer.status === 429)).toBe(true);
    expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThanOrEqual(30);
    expect(answers.filter((answer) => answer.status === 429).every((answer) => Number(answer.retryAfter) >= 1)).toBe(true);
    // Nothing lost for the ordinary client.
    expect(saved.status).toBe(200);
    expect((await batchEnded(harness, (await saved.json()) as string)).status).toBe('COMPLETED');
    expect((await harness.api('/api/v2/entities/999999991', { as: 'read' })).status).toBe(404);
  });

  it('refuses a key used from outside its allow-list, and takes it from inside', async () => {
    const path = '/api/v2/entities/999999991';
    const from = (address: string) =>
      fetch(`${harness.baseUrl}${path}`, {
        headers: { ...elzaHeaders(OFFICE_KEY, { host: '127.0.0.1', method: 'GET', pathAndQuery: path }), 'x-forwarded-for': address },
      });
    const outside = await from('192.0.2.1');
    expect(outside.status).toBe(401);
    expect(((await outside.json()) as { properties: { reason: string } }).properties.reason).toBe('SignatureMismatch');
    expect((await from('10.20.1.1')).status).toBe(404);
  });

  it('refuses an unknown query parameter, naming it', async () => {
    const response = await fetch(`${harness.baseUrl}/api/v2/search?page=1&pageSize=10&sneaky=1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKENS.read}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toContain('"sneaky"');
  });
});
