// The GET of a current record is answered before Koa when it needs nothing
// of it (api/reads/entity-get.ts). Its answers must be those of the Koa
// chain, header for header and in the same order: a trailing slash (which
// the route allows) sends the same request through Koa, to compare. Any
// query goes to Koa too, whose strict parameters refuse what the route does
// not define, so the direct answer never skips that check.
import { randomInt, randomUUID } from 'node:crypto';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../api/app.ts';
import { loadConfig } from '../../config.ts';
import { loadTokens } from '../../api/auth/tokens.ts';
import { parseEntityRef, entityIdSchema } from '../../api/params.ts';
import { createLogger } from '../../logger.ts';
import { applyBatch, type AppliedRevision } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_KEYS, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { elzaHeaders } from '../support/nda-signer.ts';
import { eventually } from '../support/poll.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';

interface Answer {
  status: number;
  /** Name and value pairs as sent, Date left out. */
  headers: string[][];
  body: string;
}

function get(baseUrl: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${baseUrl}${path}`, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const pairs: string[][] = [];
        for (let index = 0; index < response.rawHeaders.length; index += 2)
          pairs.push([response.rawHeaders[index]!, response.rawHeaders[index + 1]!]);
        resolve({ status: response.statusCode!, headers: pairs.filter(([name]) => name!.toLowerCase() !== 'date'), body });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

describe('GET of a current record without Koa', () => {
  let harness: Harness;
  let entity: AppliedRevision;
  let own: { app: Koa; server: Server; baseUrl: string };
  const bearer = { authorization: `Bearer ${TEST_TOKENS.read}` };

  beforeAll(async () => {
    harness = await startHarness();
    const applied = await applyBatch(
      harness,
      batchXml([create('e1', 'Božena Němcová & <Praha>', { entityType: `DIRECT-${randomUUID()}` })]),
    );
    entity = applied.revisions.get('e1')!;
    const { config, db, temporal } = harness;
    const app = buildApp({ config, db, temporal, log: createLogger('silent', 'test'), tokens: loadTokens(config, () => undefined) });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    own = { app, server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  });
  afterAll(async () => {
    own?.server.close();
    await harness?.close();
  });

  it('answers as the Koa chain does, header for header: v2 and v1, by number and UUID, 200 and 304, bearer and HMAC', async () => {
    const etag = (await get(harness.baseUrl, `/api/v2/entities/${entity.entityId}`, bearer)).headers.find(([name]) => name === 'ETag')![1]!;
    const host = new URL(harness.baseUrl).host;
    const cases: { path: string; headers: Record<string, string> }[] = [];
    for (const version of ['v2', 'v1']) {
      for (const ref of [String(entity.entityId), entity.entityUuid, entity.entityUuid.toUpperCase()]) {
        const path = `/api/${version}/entities/${ref}`;
        cases.push(
          { path, headers: bearer },
          { path, headers: { ...bearer, accept: '*/*' } },
          // What the real client's generated code sends (decision 0040).
          { path, headers: { ...bearer, accept: 'application/json' } },
          { path, headers: { ...bearer, 'if-none-match': etag } },
          { path, headers: { ...bearer, 'if-none-match': `"other", W/${etag}` } },
          { path, headers: { ...bearer, 'if-none-match': '"other"' } },
        );
      }
    }
    for (const [index, { path, headers }] of cases.entries()) {
      const requestId = `same-id-${index}`;
      const direct = await get(harness.baseUrl, path, { ...headers, 'x-request-id': requestId });
      const throughKoa = await get(harness.baseUrl, `${path}/`, { ...headers, 'x-request-id': requestId });
      expect(direct, `${path} ${JSON.stringify(headers)}`).toEqual(throughKoa);
      expect([200, 304]).toContain(direct.status);
    }
    // Signed: each request signs its own path and query.
    const path = `/api/v2/entities/${entity.entityId}`;
    const direct = await get(harness.baseUrl, path, {
      ...elzaHeaders(TEST_KEYS.read, { host: host.split(':')[0]!, method: 'GET', pathAndQuery: path }),
      'x-request-id': 'signed',
    });
    const throughKoa = await get(harness.baseUrl, `${path}/`, {
      ...elzaHeaders(TEST_KEYS.read, { host: host.split(':')[0]!, method: 'GET', pathAndQuery: `${path}/` }),
      'x-request-id': 'signed',
    });
    expect(direct.status).toBe(200);
    expect(direct).toEqual(throughKoa);
    // A request id the client did not send, or sent unusable, is made up, as Koa makes it up.
    const made = await get(harness.baseUrl, path, { ...bearer, 'x-request-id': 'not a usable id!' });
    expect(made.headers.find(([name]) => name === 'X-Request-Id')![1]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers without Koa when it can, and leaves to Koa what it cannot', async () => {
    const createContext = vi.spyOn(own.app, 'createContext');
    const path = `/api/v2/entities/${entity.entityId}`;
    try {
      for (const version of ['v2', 'v1']) {
        expect((await get(own.baseUrl, `/api/${version}/entities/${entity.entityId}`, bearer)).status).toBe(200);
        expect((await get(own.baseUrl, `/api/${version}/entities/${entity.entityUuid}`, { ...bearer, accept: '*/*' })).status).toBe(200);
      }
      // The real client's Accept: v2 answers XML to it, so it needs no negotiation.
      expect((await get(own.baseUrl, path, { ...bearer, accept: 'application/json' })).status).toBe(200);
      const host = new URL(own.baseUrl).hostname;
      for (const key of [TEST_KEYS.read, TEST_KEYS.admin]) {
        expect((await get(own.baseUrl, path, elzaHeaders(key, { host, method: 'GET', pathAndQuery: path }))).status).toBe(200);
      }
      expect(createContext).not.toHaveBeenCalled();
      // Koa's: a query (refused there: the route defines no parameter), CORS, v1's negotiation, v2's EAC-CPF, HEAD, no or unknown credentials, an unknown record, a path that names no record.
      const left: [string, Record<string, string>, number, string?][] = [
        [`${path}?a=1`, bearer, 400],
        [path, { ...bearer, origin: 'https://example.org' }, 200],
        [`/api/v1/entities/${entity.entityId}`, { ...bearer, accept: 'application/xml' }, 200],
        [path, { ...bearer, accept: 'application/eac-cpf+xml' }, 200],
        [path, bearer, 200, 'HEAD'],
        [path, {}, 401],
        [path, { authorization: 'Bearer not-a-token' }, 401],
        [
          path,
          elzaHeaders(
            { ...TEST_KEYS.read, secret: 'not-its-secret-not-its-secret-not-its' },
            { host: '127.0.0.1', method: 'GET', pathAndQuery: path },
          ),
          401,
        ],
        ['/api/v2/entities/2147483000', bearer, 404],
        ['/api/v2/entities/not-a-ref', bearer, 404],
        [`${path}/`, bearer, 200],
      ];
      for (const [leftPath, headers, status, method] of left) {
        createContext.mockClear();
        const answer =
          method === 'HEAD'
            ? await fetch(`${own.baseUrl}${leftPath}`, { method, headers }).then((response) => ({ status: response.status }))
            : await get(own.baseUrl, leftPath, headers);
        expect(answer.status, `${method ?? 'GET'} ${leftPath} ${JSON.stringify(headers)}`).toBe(status);
        expect(createContext, leftPath).toHaveBeenCalledTimes(1);
      }
      const unknown = await get(own.baseUrl, '/api/v2/entities/2147483000', { ...bearer, 'x-request-id': 'missing-one' });
      expect(unknown.headers).toContainEqual(['Content-Type', 'application/problem+json']);
      expect(JSON.parse(unknown.body)).toMatchObject({ code: 'EntityNotFound', requestId: 'missing-one' });
    } finally {
      createContext.mockRestore();
    }
  });

  it("holds a key to its address allow-list and the failures to the throttle, as Koa's authentication does", async () => {
    const { config, db, temporal } = harness;
    const keys = {
      inside: { keyId: 'direct-inside', secret: 'direct-inside-secret-0123456789abcdef' },
      outside: { keyId: 'direct-outside', secret: 'direct-outside-secret-0123456789abcde' },
    };
    const limited = loadConfig({
      ...process.env,
      DATABASE_URL: config.DATABASE_URL,
      API_KEYS: JSON.stringify([
        { name: 'inside', ...keys.inside, permissions: ['read'], allowFrom: ['127.0.0.0/8', '::1', '10.77.0.0/16'] },
        { name: 'outside', ...keys.outside, permissions: ['read'], allowFrom: ['10.20.0.0/16'] },
      ]),
      AUTH_FAILURE_LIMIT: '2',
      AUTH_FAILURE_WINDOW_SECONDS: '600',
      // The failures come from an address of their own (named by the trusted proxy on loopback), so no other test's count reaches them.
      TRUSTED_PROXIES: '127.0.0.1/32,::1',
    });
    const attacker = { 'x-forwarded-for': `10.77.${randomInt(256)}.${randomInt(1, 255)}` };
    const app = buildApp({
      config: limited,
      db,
      temporal,
      log: createLogger('silent', 'test'),
      tokens: loadTokens(limited, () => undefined),
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const createContext = vi.spyOn(app, 'createContext');
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const path = `/api/v2/entities/${entity.entityId}`;
      const signed = (key: { keyId: string; secret: string }, pathAndQuery = path) =>
        elzaHeaders(key, { host: '127.0.0.1', method: 'GET', pathAndQuery });
      // Inside its list the key is answered directly; outside it, the same 401 as through Koa.
      expect((await get(baseUrl, path, signed(keys.inside))).status).toBe(200);
      expect(createContext).not.toHaveBeenCalled();
      const refused = await get(baseUrl, path, { ...signed(keys.outside), ...attacker, 'x-request-id': 'outside' });
      const refusedByKoa = await get(baseUrl, `${path}/`, { ...signed(keys.outside, `${path}/`), ...attacker, 'x-request-id': 'outside' });
      expect(refused.status).toBe(401);
      // The same refusal but for the path each signed (the detail names the canonical string).
      const reasonOf = (answer: Answer) =>
        (({ code, status, properties: { reason } }) => ({ code, status, reason }))(
          JSON.parse(answer.body) as { code: string; status: number; properties: { reason: string } },
        );
      expect(reasonOf(refused)).toEqual({ code: 'Unauthorized', status: 401, reason: 'SignatureMismatch' });
      expect(reasonOf(refusedByKoa)).toEqual(reasonOf(refused));
      // Failures past the limit are throttled (429) on the direct path's URL as on Koa's; valid credentials never are.
      for (let index = 0; index < 3; index += 1) await get(baseUrl, path, { ...signed(keys.outside), ...attacker });
      const throttled = await get(baseUrl, path, { ...signed(keys.outside), ...attacker });
      expect(throttled.status).toBe(429);
      expect(throttled.headers.find(([name]) => name!.toLowerCase() === 'retry-after')).toBeDefined();
      createContext.mockClear();
      expect((await get(baseUrl, path, { ...signed(keys.inside), ...attacker })).status).toBe(200);
      expect(createContext).not.toHaveBeenCalled();
    } finally {
      createContext.mockRestore();
      server.close();
    }
  });

  it("counts its requests in the duration metric under the route's pattern, as Koa does", async () => {
    const counted = async () => {
      const text = await (await fetch(`${own.baseUrl}/metrics`, { headers: metricsAuthorization(harness.config) })).text();
      const line = text
        .split('\n')
        .find((candidate) =>
          candidate.startsWith('http_request_duration_seconds_count{route="/api/v2/entities/:entityId",method="GET",status="200"}'),
        );
      return Number(line?.split(' ')[1] ?? 0);
    };
    const before = await counted();
    for (let index = 0; index < 3; index += 1)
      expect((await get(own.baseUrl, `/api/v2/entities/${entity.entityId}`, bearer)).status).toBe(200);
    expect((await get(own.baseUrl, `/api/v2/entities/${entity.entityId}/`, bearer)).status).toBe(200);
    await eventually(async () => expect(await counted()).toBe(before + 4), 5000);
  });

  it('reads an entity reference as entityIdSchema does', () => {
    for (const value of [
      '1',
      '42',
      '9999999999999999',
      '0',
      '01',
      '-1',
      '1.5',
      '',
      'abc',
      randomUUID(),
      randomUUID().toUpperCase(),
      `${randomUUID()}x`,
      'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
      5,
      undefined,
    ]) {
      const parsed = entityIdSchema.safeParse(value);
      expect(parseEntityRef(value), String(value)).toEqual(parsed.success ? parsed.data : undefined);
    }
  });
});
