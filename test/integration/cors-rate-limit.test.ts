import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

const ALLOWED_ORIGIN = 'https://registry.example.org';
const SUBMISSIONS_PER_WINDOW = 3;

describe('browser clients and submission limits', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      env: {
        CORS_ORIGINS: `${ALLOWED_ORIGIN}, http://localhost:3000`,
        SUBMISSION_RATE_LIMIT: String(SUBMISSIONS_PER_WINDOW),
        SUBMISSION_RATE_WINDOW_SECONDS: '600',
        EXPORT_RATE_LIMIT: String(SUBMISSIONS_PER_WINDOW),
        EXPORT_RATE_WINDOW_SECONDS: '600',
      },
    });
    // The counters live in the run's one database: start from none, whatever another file counted.
    await harness.sql(
      `delete from submission_rate where principal in ('test-writer', 'test-forcer', 'test-exporter', 'test-reader', 'test-admin') or principal like 'export:%'`,
    );
  });
  afterAll(async () => {
    await harness?.close();
  });

  const submitBatch = (as: 'write' | 'force') =>
    harness.api('/api/v2/batches', {
      method: 'POST',
      as,
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', `Limit ${randomUUID()}`, { entityType: `LIMIT-${randomUUID()}` })]),
    });
  const startExport = (as: 'export' | 'admin') =>
    harness.api('/api/v2/export/snapshots', { method: 'POST', as, headers: { 'content-type': 'application/json' }, body: '[999999991]' });

  describe('CORS', () => {
    it('answers the preflight of an allowed origin without a token', async () => {
      const response = await harness.api('/api/v2/batches', {
        method: 'OPTIONS',
        as: null,
        headers: {
          origin: ALLOWED_ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
      expect(response.headers.get('access-control-allow-methods')).toContain('POST');
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it('lets an allowed origin read the headers a client needs, on answers and on problems', async () => {
      const answer = await harness.api('/api/v2/entities/999999991', { headers: { origin: ALLOWED_ORIGIN } });
      expect(answer.status).toBe(404);
      expect(answer.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
      const exposed = answer.headers.get('access-control-expose-headers')?.split(',') ?? [];
      expect(exposed).toEqual(expect.arrayContaining(['Location', 'ETag', 'Content-Disposition', 'X-Request-Id', 'Retry-After']));
      expect(answer.headers.get('vary')).toContain('Origin');

      const unauthorized = await harness.api('/api/v2/entities/1', { as: null, headers: { origin: 'http://localhost:3000' } });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    });

    it('gives an origin not on the list nothing, preflight or not', async () => {
      const preflight = await harness.api('/api/v2/batches', {
        method: 'OPTIONS',
        as: null,
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.headers.get('access-control-allow-methods')).toBeNull();
      const answer = await harness.api('/api/v2/entities/1', { headers: { origin: `${ALLOWED_ORIGIN}.evil.example` } });
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('allows no origin unless configured, and refuses a list entry that is not an origin at start', () => {
      expect(loadConfig({ DATA_DIR: harness.config.DATA_DIR }).CORS_ORIGINS).toEqual([]);
      expect(() => loadConfig({ DATA_DIR: harness.config.DATA_DIR, CORS_ORIGINS: 'https://app.example.org/path' })).toThrow(ConfigError);
      expect(() => loadConfig({ DATA_DIR: harness.config.DATA_DIR, CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
    });
  });

  describe('submission rate limit', () => {
    it('refuses a token its submissions beyond the limit with 429 and Retry-After, counting batches and test batches together', async () => {
      expect((await submitBatch('write')).status).toBe(200);
      expect((await submitBatch('write')).status).toBe(200);
      const test = await harness.api('/api/v2/batches/test', {
        method: 'POST',
        as: 'write',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('a', 'Limit Test')]),
      });
      expect(test.status).toBe(200);

      const refused = await submitBatch('write');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(600);
      expect(await refused.json()).toMatchObject({ status: 429, code: 'TooManyRequests', requestId: refused.headers.get('x-request-id') });

      const v1 = await harness.api('/api/v1/batches', {
        method: 'POST',
        as: 'write',
        headers: { 'content-type': 'application/xml' },
        body: '<bu/>',
      });
      expect(v1.status).toBe(429);
    });

    it('counts each token on its own and leaves reads alone', async () => {
      expect((await submitBatch('force')).status).toBe(200);
      expect((await harness.api('/api/v2/entities/999999991', { as: 'write' })).status).toBe(404);
    });

    it('limits export submissions too', async () => {
      const statuses: number[] = [];
      for (let attempt = 0; attempt <= SUBMISSIONS_PER_WINDOW; attempt++) statuses.push((await startExport('export')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    });

    it('keeps exports and synchronous snapshots on a budget of their own: a principal that spent it still saves', async () => {
      const snapshot = () =>
        harness.api('/api/v1/export/snapshots', {
          method: 'POST',
          as: 'admin',
          headers: { 'content-type': 'application/json' },
          body: '["999999991"]',
        });
      const statuses: number[] = [];
      for (let attempt = 0; attempt < SUBMISSIONS_PER_WINDOW - 1; attempt++) statuses.push((await snapshot()).status);
      statuses.push((await startExport('admin')).status);
      const refused = await snapshot();
      expect([...statuses, refused.status]).toEqual([200, 200, 200, 429]);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The same principal's saves spend the batches' budget, which no read touched.
      const save = await harness.api('/api/v2/batches', {
        method: 'POST',
        as: 'admin',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('a', `Save ${randomUUID()}`, { entityType: `LIMIT-${randomUUID()}` })]),
      });
      expect(save.status).toBe(200);
      const v1Save = await harness.api('/api/v1/batches', {
        method: 'POST',
        as: 'admin',
        headers: { 'content-type': 'application/xml' },
        body: '<bu/>',
      });
      expect(v1Save.status).not.toBe(429);
    });

    it('checks the permission first: a token that may not submit gets 403, never 429', async () => {
      for (let attempt = 0; attempt <= SUBMISSIONS_PER_WINDOW; attempt++) {
        expect(
          (
            await harness.api('/api/v2/batches', {
              method: 'POST',
              as: 'read',
              headers: { 'content-type': 'application/xml' },
              body: '<x/>',
            })
          ).status,
        ).toBe(403);
      }
    });
  });
});
