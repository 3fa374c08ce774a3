// HMAC API keys as the registry's client (ELZA) signs, on v1 and v2, beside
// the bearer tokens. Every signature here comes from test/support/nda-signer.ts,
// an implementation of its own, never from the service's api/auth/nda-hmac.ts.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.ts';
import { loadTokens } from '../../api/auth/tokens.ts';
import { loadConfig } from '../../config.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_KEYS, type Harness } from '../support/harness.ts';
import { elzaHeaders, elzaSignature, ndaDate, type TestKey } from '../support/nda-signer.ts';

const CLI = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
const XML = { 'content-type': 'application/xml' };
const JSON_BODY = { 'content-type': 'application/json' };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request exactly as given (path, query and Host untouched), the way a Java client puts it on the wire. */
function send(
  baseUrl: string,
  options: { method?: string; pathAndQuery: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    const headers: Record<string, string> = { ...options.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
    const outgoing = request(
      { host: hostname, port, method: options.method ?? 'GET', path: options.pathAndQuery, headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** A signed request from `host` (what the client called; the socket still goes to the harness). */
function signed(
  harness: Harness,
  key: TestKey,
  options: { method?: string; pathAndQuery: string; headers?: Record<string, string>; body?: string; host?: string; at?: Date },
): Promise<Answer> {
  const method = options.method ?? 'GET';
  const host = options.host ?? '127.0.0.1';
  const signature = elzaHeaders(key, { host, method, pathAndQuery: options.pathAndQuery, at: options.at });
  return send(harness.baseUrl, { ...options, method, headers: { ...options.headers, ...signature } });
}

/** The parts of a 401 that do not differ between causes: status, media type, challenge (but for a bearer token's invalid_token) and code. */
function refusal(answer: Answer): unknown {
  const body = JSON.parse(answer.text) as Record<string, unknown>;
  expect(body.requestId).toBeTypeOf('string');
  const challenge = String(answer.headers['www-authenticate']).replace(', error="invalid_token"', '');
  return { status: answer.status, type: answer.headers['content-type'], challenge, code: body.code };
}

describe('HMAC API keys', () => {
  let harness: Harness;
  let entityId: number;
  let transactions: string[];

  beforeAll(async () => {
    harness = await startHarness({ env: { V1_BATCH_WAIT_SECONDS: '30' } });
    const first = await applyBatch(harness, batchXml([create('a', `Podpis ${randomUUID()}`, { entityType: `HMAC-${randomUUID()}` })]));
    const second = await applyBatch(harness, batchXml([create('a', `Podpis ${randomUUID()}`, { entityType: `HMAC-${randomUUID()}` })]));
    entityId = first.revisions.get('a')!.entityId;
    transactions = [first.transaction, second.transaction];
  });
  afterAll(async () => {
    await harness?.close();
  });

  describe('a correctly signed request', () => {
    it('reads an entity on v2 and v1 (GET without a query)', async () => {
      const v2 = await signed(harness, TEST_KEYS.read, { pathAndQuery: `/api/v2/entities/${entityId}` });
      expect(v2.status, v2.text).toBe(200);
      expect(v2.text).toContain('Podpis');
      const v1 = await signed(harness, TEST_KEYS.read, { pathAndQuery: `/api/v1/entities/${entityId}` });
      expect(v1.status, v1.text).toBe(200);
    });

    it('reads a change feed (GET with a query), on v2 and v1', async () => {
      const [from, to] = transactions as [string, string];
      for (const version of ['v2', 'v1']) {
        const answer = await signed(harness, TEST_KEYS.read, {
          pathAndQuery: `/api/${version}/updates?fromTransId=${from}&toTransId=${to}&page=1&pageSize=10`,
        });
        expect(answer.status, `${version}: ${answer.text}`).toBe(200);
      }
    });

    it('covers the decoded query: a percent-encoded value is signed as its text, not as its escapes', async () => {
      const pathAndQuery = `/api/v2/entities/${entityId}?note=Nov%C3%A1k%20%26%20syn%2B+x`;
      // Past authentication: refused only as a parameter the operation does not take.
      const accepted = await signed(harness, TEST_KEYS.read, { pathAndQuery });
      expect(accepted.status).toBe(400);
      expect(accepted.text).toContain('unknown query parameter');
      // Signed over the escapes as sent: not what the client signs, so not accepted.
      const date = ndaDate(new Date());
      const overEscapes = elzaSignature(
        TEST_KEYS.read.secret,
        `127.0.0.1GET/api/v2/entities/${entityId}note=Nov%C3%A1k%20%26%20syn%2B+x${date}`,
      );
      const answer = await send(harness.baseUrl, {
        pathAndQuery,
        headers: { 'x-nda-date': date, authorization: `NDA-HMAC-SHA256 KeyId=${TEST_KEYS.read.keyId},Signature=${overEscapes}` },
      });
      expect(answer.status).toBe(401);
    });

    it('searches with a JSON body (POST, v2 and v1)', async () => {
      for (const version of ['v2', 'v1']) {
        const answer = await signed(harness, TEST_KEYS.read, {
          method: 'POST',
          pathAndQuery: `/api/${version}/search?page=1&pageSize=10`,
          headers: JSON_BODY,
          body: '{}',
        });
        expect(answer.status, `${version}: ${answer.text}`).toBe(200);
      }
    });

    it("submits a batch with an XML body (POST, v2), recorded under the key's name", async () => {
      const answer = await signed(harness, TEST_KEYS.write, {
        method: 'POST',
        pathAndQuery: '/api/v2/batches',
        headers: XML,
        body: batchXml([create('a', `Klíč ${randomUUID()}`, { entityType: `HMAC-${randomUUID()}` })]),
      });
      expect(answer.status, answer.text).toBeLessThan(300);
      const batchId = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(answer.text)![0];
      const [batch] = await harness.sql<{ submitted_by: string }>('select submitted_by from batch where id = $1', [batchId]);
      expect(batch!.submitted_by).toBe('key-writer');
    });

    it('submits a batch on v1 (POST, answered synchronously)', async () => {
      const answer = await signed(harness, TEST_KEYS.write, {
        method: 'POST',
        pathAndQuery: '/api/v1/batches',
        headers: XML,
        body: batchXml([create('a', `Klíč v1 ${randomUUID()}`, { entityType: `HMAC-${randomUUID()}` })], { version: 'v1' }),
      });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).toContain('<bus');
    });

    it('starts an export with the export permission', async () => {
      const answer = await signed(harness, TEST_KEYS.export, {
        method: 'POST',
        pathAndQuery: '/api/v2/export/snapshots',
        headers: JSON_BODY,
        body: JSON.stringify([entityId]),
      });
      expect(answer.status, answer.text).toBeLessThan(300);
    });

    it('accepts a date at the edge of the window, either way', async () => {
      for (const shift of [-110_000, 110_000]) {
        const answer = await signed(harness, TEST_KEYS.read, {
          pathAndQuery: `/api/v2/entities/${entityId}`,
          at: new Date(Date.now() + shift),
        });
        expect(answer.status, `shifted ${shift} ms`).toBe(200);
      }
    });
  });

  describe('every failure is a 401 that says which check failed, never with a secret', () => {
    const path = () => `/api/v2/entities/${entityId}`;
    const now = () => ndaDate(new Date());
    const signature = (secret: string, date: string, data = `127.0.0.1GET${path()}${date}`) => elzaSignature(secret, data);
    const header = (keyId: string, sig: string) => `NDA-HMAC-SHA256 KeyId=${keyId},Signature=${sig}`;
    const { keyId, secret } = TEST_KEYS.read;

    const cases: Array<[string, () => Record<string, string>, string]> = [
      ['no credentials at all', () => ({}), 'NoCredentials'],
      ['no X-NDA-Date', () => ({ authorization: header(keyId, signature(secret, now())) }), 'DateMissing'],
      [
        'an X-NDA-Date of 13 digits',
        () => {
          const date = now().slice(0, 13);
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date)) };
        },
        'DateInvalid',
      ],
      [
        'an X-NDA-Date that is no date (month 13)',
        () => {
          const date = `${now().slice(0, 4)}13${now().slice(6)}`;
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date)) };
        },
        'DateInvalid',
      ],
      [
        'an ISO date instead of yyyyMMddHHmmss',
        () => {
          const date = new Date().toISOString();
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date)) };
        },
        'DateInvalid',
      ],
      [
        'a date 6 minutes old',
        () => {
          const date = ndaDate(new Date(Date.now() - 360_000));
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date)) };
        },
        'DateOutsideWindow',
      ],
      [
        'a date 6 minutes ahead',
        () => {
          const date = ndaDate(new Date(Date.now() + 360_000));
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date)) };
        },
        'DateOutsideWindow',
      ],
      [
        'an unknown keyId',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header('no-such-key', signature(secret, date)) };
        },
        'SignatureMismatch',
      ],
      [
        'a wrong secret',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header(keyId, signature(`${secret}x`, date)) };
        },
        'SignatureMismatch',
      ],
      [
        "another key's signature",
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header(keyId, signature(TEST_KEYS.admin.secret, date)) };
        },
        'SignatureMismatch',
      ],
      [
        'a signature of another path',
        () => {
          const date = now();
          return {
            'x-nda-date': date,
            authorization: header(keyId, signature(secret, date, `127.0.0.1GET/api/v2/entities/${entityId + 1}${date}`)),
          };
        },
        'SignatureMismatch',
      ],
      [
        'a signature of another method',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date, `127.0.0.1POST${path()}${date}`)) };
        },
        'SignatureMismatch',
      ],
      [
        'a signature of another host',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date, `localhostGET${path()}${date}`)) };
        },
        'SignatureMismatch',
      ],
      [
        'a signature with the port in the host',
        () => {
          const date = now();
          return {
            'x-nda-date': date,
            authorization: header(keyId, signature(secret, date, `${new URL(harness.baseUrl).host}GET${path()}${date}`)),
          };
        },
        'SignatureMismatch',
      ],
      [
        'a signature of another date',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, ndaDate(new Date(Date.now() - 1000)))) };
        },
        'SignatureMismatch',
      ],
      [
        'a truncated signature',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header(keyId, signature(secret, date).slice(0, -1)) };
        },
        'MalformedSignatureHeader',
      ],
      [
        'a hex signature',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: header(keyId, Buffer.from(signature(secret, date), 'base64').toString('hex')) };
        },
        'MalformedSignatureHeader',
      ],
      [
        'no Signature parameter',
        () => ({ 'x-nda-date': now(), authorization: `NDA-HMAC-SHA256 KeyId=${keyId}` }),
        'MalformedSignatureHeader',
      ],
      [
        'no KeyId parameter',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: `NDA-HMAC-SHA256 Signature=${signature(secret, date)}` };
        },
        'MalformedSignatureHeader',
      ],
      ['the scheme alone', () => ({ 'x-nda-date': now(), authorization: 'NDA-HMAC-SHA256' }), 'MalformedSignatureHeader'],
      [
        'another HMAC scheme name',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: `NDA-HMAC-SHA1 KeyId=${keyId},Signature=${signature(secret, date)}` };
        },
        'UnsupportedScheme',
      ],
      [
        'junk after the signature',
        () => {
          const date = now();
          return { 'x-nda-date': date, authorization: `${header(keyId, signature(secret, date))},Extra=1` };
        },
        'MalformedSignatureHeader',
      ],
      [
        'the secret sent as the signature',
        () => ({ 'x-nda-date': now(), authorization: header(keyId, secret) }),
        'MalformedSignatureHeader',
      ],
      ['a bearer token that does not exist', () => ({ authorization: 'Bearer not-a-token-0000000000' }), 'UnknownToken'],
    ];

    it.each(cases)('%s', async (_name, headers, reason) => {
      const answer = await send(harness.baseUrl, { pathAndQuery: path(), headers: headers() });
      expect(answer.status, answer.text).toBe(401);
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(answer.headers['www-authenticate']).toContain('NDA-HMAC-SHA256');
      const reference = await send(harness.baseUrl, { pathAndQuery: path() });
      expect(refusal(answer)).toEqual(refusal(reference));
      const body = JSON.parse(answer.text) as { detail: string; properties: Record<string, unknown> };
      expect(body.properties.reason, body.detail).toBe(reason);
      expect(body.detail).not.toMatch(/^a valid Authorization header is required/);
      for (const key of Object.values(TEST_KEYS)) expect(answer.text).not.toContain(key.secret);
    });

    it('names the parts of the canonical string the server signed when a signature does not match', async () => {
      const date = now();
      const pathAndQuery = `${path()}?note=Nov%C3%A1k+a+syn`;
      const answer = await send(harness.baseUrl, {
        pathAndQuery,
        headers: { 'x-nda-date': date, authorization: header(keyId, signature(`${secret}x`, date)) },
      });
      const body = JSON.parse(answer.text) as { detail: string; properties: Record<string, unknown> };
      expect(body.properties).toEqual({
        reason: 'SignatureMismatch',
        canonicalHost: '127.0.0.1',
        canonicalMethod: 'GET',
        canonicalPath: path(),
        canonicalQuery: 'note=Novák a syn',
        canonicalDate: date,
      });
      expect(body.detail).toContain(`key id "${keyId}"`);
      expect(body.detail).toContain(`path "${path()}"`);
      expect(answer.headers['www-authenticate']).not.toContain('invalid_token');
    });

    it("says how far a date lies from the server's clock, and marks a wrong bearer token invalid_token", async () => {
      const old = ndaDate(new Date(Date.now() - 360_000));
      const late = await send(harness.baseUrl, {
        pathAndQuery: path(),
        headers: { 'x-nda-date': old, authorization: header(keyId, signature(secret, old)) },
      });
      expect((JSON.parse(late.text) as { detail: string }).detail).toMatch(
        new RegExp(
          `^X-NDA-Date ${old} is 36\\d s behind the server's clock \\(\\d{14}\\); a signature is accepted up to 120 s either way$`,
        ),
      );
      const bearer = await send(harness.baseUrl, { pathAndQuery: path(), headers: { authorization: 'Bearer not-a-token-0000000000' } });
      expect(bearer.headers['www-authenticate']).toBe(
        'Bearer realm="entity-records", error="invalid_token", NDA-HMAC-SHA256 realm="entity-records"',
      );
      const none = await send(harness.baseUrl, { pathAndQuery: path() });
      expect(none.headers['www-authenticate']).toBe('Bearer realm="entity-records", NDA-HMAC-SHA256 realm="entity-records"');
    });

    it('accepts a read signature used a second time', async () => {
      const readHeaders = elzaHeaders(TEST_KEYS.read, { host: '127.0.0.1', method: 'GET', pathAndQuery: path() });
      for (let i = 0; i < 2; i += 1) expect((await send(harness.baseUrl, { pathAndQuery: path(), headers: readHeaders })).status).toBe(200);
    });
  });

  // The signature covers no body, so two different writes under one key to one
  // URL in one second carry the same signature (the real client's export queue,
  // two archivists saving at once under one key). Each must be done; a
  // byte-identical resend gets what any resend gets.
  describe('one key, one URL, one second', () => {
    /** Headers signed once, at a date no other test of this file signs at. */
    const signedOnce = (key: TestKey, method: string, pathAndQuery: string, secondsAgo: number, type: Record<string, string>) => ({
      ...type,
      ...elzaHeaders(key, { host: '127.0.0.1', method, pathAndQuery, at: new Date(Date.now() - secondsAgo * 1000) }),
    });
    const fresh = (version: 'v1' | 'v2') =>
      batchXml([create('a', `Souběh ${randomUUID()}`, { entityType: `HMAC-${randomUUID()}` })], { version });
    const exportRows = async (requestedBy = 'key-exporter') => {
      const [row] = await harness.sql<{ count: string }>('select count(*) from export_request where requested_by = $1', [requestedBy]);
      return Number(row!.count);
    };

    it('does two different v2 batches and two different v1 batches sent at once under one signature', async () => {
      const v2 = signedOnce(TEST_KEYS.write, 'POST', '/api/v2/batches', 60, XML);
      const v1 = signedOnce(TEST_KEYS.write, 'POST', '/api/v1/batches', 60, XML);
      const answers = await Promise.all([
        send(harness.baseUrl, { method: 'POST', pathAndQuery: '/api/v2/batches', headers: v2, body: fresh('v2') }),
        send(harness.baseUrl, { method: 'POST', pathAndQuery: '/api/v2/batches', headers: v2, body: fresh('v2') }),
        send(harness.baseUrl, { method: 'POST', pathAndQuery: '/api/v1/batches', headers: v1, body: fresh('v1') }),
        send(harness.baseUrl, { method: 'POST', pathAndQuery: '/api/v1/batches', headers: v1, body: fresh('v1') }),
      ]);
      expect(
        answers.map((answer) => answer.status),
        answers.map((answer) => answer.text).join('\n'),
      ).toEqual([200, 200, 200, 200]);
      const [first, second] = answers.slice(0, 2).map((answer) => JSON.parse(answer.text) as string);
      expect(first).not.toBe(second);
      for (const answer of answers.slice(2)) expect(answer.text).toContain('<bus');
    });

    it('answers a byte-identical resend of a batch as a duplicate (409), on v1 and v2', async () => {
      for (const [version, path] of [
        ['v1', '/api/v1/batches'],
        ['v2', '/api/v2/batches'],
      ] as const) {
        const headers = signedOnce(TEST_KEYS.write, 'POST', path, 70, XML);
        const body = fresh(version);
        const first = await send(harness.baseUrl, { method: 'POST', pathAndQuery: path, headers, body });
        expect(first.status, first.text).toBe(200);
        const resent = await send(harness.baseUrl, { method: 'POST', pathAndQuery: path, headers, body });
        expect(resent.status, `${version}: ${resent.text}`).toBe(409);
        expect(JSON.parse(resent.text)).toMatchObject({ code: 'BatchAlreadyExists' });
      }
    });

    it('answers a replayed export start with the first export, and starts another for another body', async () => {
      const headers = signedOnce(TEST_KEYS.export, 'POST', '/api/v2/export/snapshots', 80, JSON_BODY);
      const before = await exportRows();
      const body = JSON.stringify([entityId]);
      const first = await send(harness.baseUrl, { method: 'POST', pathAndQuery: '/api/v2/export/snapshots', headers, body });
      expect(first.status, first.text).toBe(200);
      const replayed = await send(harness.baseUrl, { method: 'POST', pathAndQuery: '/api/v2/export/snapshots', headers, body });
      expect(replayed.status, replayed.text).toBe(200);
      expect(replayed.headers['content-type']).toContain('text/plain');
      expect(replayed.text).toBe(first.text);
      expect(replayed.headers.location).toBe(first.headers.location);
      expect(await exportRows()).toBe(before + 1);

      const other = await send(harness.baseUrl, {
        method: 'POST',
        pathAndQuery: '/api/v2/export/snapshots',
        headers,
        body: JSON.stringify([entityId, String(entityId)]),
      });
      expect(other.status, other.text).toBe(200);
      expect(other.text).not.toBe(first.text);
      expect(await exportRows()).toBe(before + 2);
    });

    it('answers a replayed revisions export start with the first export too', async () => {
      const pathAndQuery = `/api/v2/export/revisions?fromTransId=${transactions[0]}`;
      const headers = signedOnce(TEST_KEYS.export, 'POST', pathAndQuery, 90, JSON_BODY);
      const before = await exportRows();
      const answers = await Promise.all(
        [0, 1].map(() => send(harness.baseUrl, { method: 'POST', pathAndQuery, headers, body: JSON.stringify([entityId]) })),
      );
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      expect(answers[1]!.text).toBe(answers[0]!.text);
      expect(await exportRows()).toBe(before + 1);
    });

    it('guards signed requests only: a bearer token starts an export each time', async () => {
      const before = await exportRows('test-exporter');
      const start = () =>
        harness.api('/api/v2/export/snapshots', { method: 'POST', as: 'export', headers: JSON_BODY, body: JSON.stringify([entityId]) });
      const [first, second] = [await (await start()).text(), await (await start()).text()];
      expect(first).not.toBe(second);
      expect(await exportRows('test-exporter')).toBe(before + 2);
    });
  });

  describe('permissions are those of the key, as for tokens', () => {
    it('403 for a write with a read key and for an export with a write key, on v2 and v1', async () => {
      const cases = [
        { key: TEST_KEYS.read, method: 'POST', pathAndQuery: '/api/v2/batches', headers: XML, body: '<batchUpdate/>' },
        { key: TEST_KEYS.read, method: 'POST', pathAndQuery: '/api/v1/batches', headers: XML, body: '<bu/>' },
        { key: TEST_KEYS.write, method: 'POST', pathAndQuery: '/api/v2/export/snapshots', headers: JSON_BODY, body: '[1]' },
        { key: TEST_KEYS.write, method: 'POST', pathAndQuery: '/api/v1/export/snapshots', headers: JSON_BODY, body: '["1"]' },
        { key: TEST_KEYS.export, method: 'POST', pathAndQuery: '/api/v2/batches/test', headers: XML, body: '<batchUpdate/>' },
      ];
      for (const { key, ...one } of cases) {
        const answer = await signed(harness, key, one);
        expect(answer.status, `${key.keyId} ${one.method} ${one.pathAndQuery}`).toBe(403);
        expect(JSON.parse(answer.text)).toMatchObject({ code: 'Forbidden' });
      }
    });

    it('the admin key holds every permission: read, write and export', async () => {
      const cases = [
        { method: 'GET', pathAndQuery: `/api/v2/entities/${entityId}` },
        {
          method: 'POST',
          pathAndQuery: '/api/v2/batches/test',
          headers: XML,
          body: batchXml([create('a', `Správce ${randomUUID()}`, { entityType: `HMAC-${randomUUID()}` })]),
        },
        { method: 'POST', pathAndQuery: '/api/v2/export/snapshots', headers: JSON_BODY, body: JSON.stringify([entityId]) },
      ];
      for (const one of cases) {
        const answer = await signed(harness, TEST_KEYS.admin, one);
        expect(answer.status, `${one.method} ${one.pathAndQuery}: ${answer.text}`).toBe(200);
      }
    });
  });

  it('bearer tokens still work beside the keys', async () => {
    const read = await harness.api(`/api/v2/entities/${entityId}`, { as: 'read' });
    expect(read.status).toBe(200);
    const forbidden = await harness.api('/api/v2/batches', { method: 'POST', headers: XML, body: '<batchUpdate/>', as: 'read' });
    expect(forbidden.status).toBe(403);
    const v1 = await harness.api(`/api/v1/entities/${entityId}`, { as: 'read' });
    expect(v1.status).toBe(200);
  });

  it('ignores X-Forwarded-Host unless TRUST_PROXY is set', async () => {
    const answer = await signed(harness, TEST_KEYS.read, {
      pathAndQuery: `/api/v2/entities/${entityId}`,
      host: 'records.example.org',
      headers: { 'x-forwarded-host': 'records.example.org' },
    });
    expect(answer.status).toBe(401);
  });

  it("logs the key's name as the principal, and never a secret, at debug level too", async () => {
    const lines: string[] = [];
    const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
    const server = buildApp({
      config: harness.config,
      db: harness.db,
      temporal: harness.temporal,
      log,
      tokens: loadTokens(harness.config, () => undefined),
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const good = elzaHeaders(TEST_KEYS.read, { host: '127.0.0.1', method: 'GET', pathAndQuery: `/api/v2/entities/${entityId}` });
      expect((await send(baseUrl, { pathAndQuery: `/api/v2/entities/${entityId}`, headers: good })).status).toBe(200);
      const bad = elzaHeaders(
        { keyId: TEST_KEYS.read.keyId, secret: TEST_KEYS.admin.secret },
        { host: '127.0.0.1', method: 'GET', pathAndQuery: `/api/v2/entities/${entityId}` },
      );
      expect((await send(baseUrl, { pathAndQuery: `/api/v2/entities/${entityId}`, headers: bad })).status).toBe(401);
      const refused = await send(baseUrl, {
        method: 'POST',
        pathAndQuery: '/api/v2/batches',
        headers: { ...XML, ...elzaHeaders(TEST_KEYS.read, { host: '127.0.0.1', method: 'POST', pathAndQuery: '/api/v2/batches' }) },
        body: '<batchUpdate/>',
      });
      expect(refused.status).toBe(403);
    } finally {
      server.close();
      server.closeAllConnections();
    }
    const logged = lines.join('');
    expect(logged).toContain('"principal":"key-reader"');
    for (const key of Object.values(TEST_KEYS)) expect(logged).not.toContain(key.secret);
  });

  it('never shows a secret in the OpenAPI documents', async () => {
    for (const version of ['v2', 'v1']) {
      const text = await (await harness.api(`/api/${version}/openapi.json`, { as: null })).text();
      expect(text).toContain('NDA-HMAC-SHA256');
      for (const key of Object.values(TEST_KEYS)) expect(text).not.toContain(key.secret);
    }
  });

  describe('the CLI signs with a key', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'entity-records-hmac-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
      const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ENTITY_RECORDS_')));
      return new Promise((resolve) => {
        execFile(
          process.execPath,
          [CLI, ...args],
          { env: { ...base, ENTITY_RECORDS_URL: harness.baseUrl, ...env } },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
        );
      });
    }

    it("reads with --key-id/--key-secret and submits with ENTITY_RECORDS_KEY_ID/SECRET, recorded under the key's name", async () => {
      const read = await cli(
        ['entity', 'get', String(entityId), '--key-id', TEST_KEYS.read.keyId, '--key-secret', TEST_KEYS.read.secret],
        {},
      );
      expect(read.code, read.stderr).toBe(0);
      expect(read.stdout).toContain('Podpis');

      const file = join(dir, 'batch.xml');
      writeFileSync(file, batchXml([create('a', `CLI klíč ${randomUUID()}`, { entityType: `HMAC-${randomUUID()}` })]));
      const submitted = await cli(['batch', 'submit', file], {
        ENTITY_RECORDS_KEY_ID: TEST_KEYS.write.keyId,
        ENTITY_RECORDS_KEY_SECRET: TEST_KEYS.write.secret,
      });
      expect(submitted.code, submitted.stderr).toBe(0);
      const [batch] = await harness.sql<{ submitted_by: string }>('select submitted_by from batch where id = $1', [
        submitted.stdout.trim(),
      ]);
      expect(batch!.submitted_by).toBe('key-writer');
    });

    it('exits 4 with the 401 for a wrong secret, and 2 for a key id without a secret', async () => {
      const wrong = await cli(['entity', 'get', String(entityId), '--key-id', TEST_KEYS.read.keyId, '--key-secret', 'x'.repeat(40)], {});
      expect(wrong.code).toBe(4);
      expect(wrong.stderr).toContain('401 Unauthorized');
      const half = await cli(['entity', 'get', String(entityId), '--key-id', TEST_KEYS.read.keyId], {});
      expect(half.code).toBe(2);
    });
  });
});

describe('behind a reverse proxy', () => {
  it('TRUST_PROXY: the host signed is X-Forwarded-Host (its first value, without the port)', async () => {
    const harness = await startHarness({ worker: false, env: { TRUST_PROXY: 'true', TRUSTED_PROXIES: '127.0.0.1' } });
    try {
      const path = '/api/v2/entities/999999999';
      const behind = await signed(harness, TEST_KEYS.read, {
        pathAndQuery: path,
        host: 'records.example.org',
        headers: { 'x-forwarded-host': 'Records.Example.org:443, inner.local' },
      });
      expect(behind.status, behind.text).toBe(404);
      const direct = await signed(harness, TEST_KEYS.read, { pathAndQuery: path });
      expect(direct.status, direct.text).toBe(404);
      const spoofed = await signed(harness, TEST_KEYS.read, {
        pathAndQuery: path,
        headers: { 'x-forwarded-host': 'elsewhere.example.org' },
      });
      expect(spoofed.status).toBe(401);
    } finally {
      await harness.close();
    }
  });

  it('TRUST_PROXY refuses to start without TRUSTED_PROXIES: no peer would be believed', () => {
    expect(() => loadConfig({ FORCE_KEY_SECRET: 'hmac-test-force-key-secret-0123456789', TRUST_PROXY: 'true' })).toThrow(
      /TRUST_PROXY=true needs TRUSTED_PROXIES/,
    );
  });

  it('TRUST_PROXY: X-Forwarded-Host from a peer not in TRUSTED_PROXIES is not the host signed', async () => {
    const harness = await startHarness({ worker: false, env: { TRUST_PROXY: 'true', TRUSTED_PROXIES: '192.0.2.1' } });
    try {
      const path = '/api/v2/entities/999999999';
      const past = await signed(harness, TEST_KEYS.read, {
        pathAndQuery: path,
        host: 'records.example.org',
        headers: { 'x-forwarded-host': 'records.example.org' },
      });
      expect(past.status).toBe(401);
      expect((await signed(harness, TEST_KEYS.read, { pathAndQuery: path })).status).toBe(404);
    } finally {
      await harness.close();
    }
  });

  it('PUBLIC_HOST: the host signed is that name, whatever the request says', async () => {
    const harness = await startHarness({ worker: false, env: { PUBLIC_HOST: 'records.example.org:8443' } });
    try {
      const path = '/api/v2/entities/999999999';
      expect((await signed(harness, TEST_KEYS.read, { pathAndQuery: path, host: 'records.example.org' })).status).toBe(404);
      expect((await signed(harness, TEST_KEYS.read, { pathAndQuery: path })).status).toBe(401);
    } finally {
      await harness.close();
    }
  });
});

describe('the replay guard', () => {
  it('API_KEY_REPLAY_GUARD=false: a replayed export start starts another export', async () => {
    const harness = await startHarness({ worker: false, env: { API_KEY_REPLAY_GUARD: 'false' } });
    try {
      const headers = {
        ...JSON_BODY,
        ...elzaHeaders(TEST_KEYS.export, { host: '127.0.0.1', method: 'POST', pathAndQuery: '/api/v2/export/snapshots' }),
      };
      const ids: string[] = [];
      for (let i = 0; i < 2; i += 1) {
        const answer = await send(harness.baseUrl, {
          method: 'POST',
          pathAndQuery: '/api/v2/export/snapshots',
          headers,
          body: '[999999999]',
        });
        expect(answer.status, answer.text).toBe(200);
        ids.push(answer.text);
      }
      expect(ids[1]).not.toBe(ids[0]);
    } finally {
      await harness.close();
    }
  });
});
