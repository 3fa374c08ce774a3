import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../api/app.ts';
import { loadTokens } from '../../api/auth/tokens.ts';
import pg from 'pg';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { openDb } from '../../db/index.ts';
import { ensureDatabase } from '../../db/orm.ts';
import { createLogger } from '../../logger.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';

type Token = keyof typeof TEST_TOKENS;
const V2 = '/api/v2';
const xml = { 'content-type': 'application/xml' };
const json = { 'content-type': 'application/json' };

interface RouteCase {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: () => string;
  permission: 'read' | 'write' | 'export';
}

const ROUTES: RouteCase[] = [
  {
    name: 'v2 submit batch',
    method: 'POST',
    path: `${V2}/batches`,
    headers: xml,
    body: () => batchXml([create('a', `Oprávnění ${randomUUID()}`)]),
    permission: 'write',
  },
  {
    name: 'v2 test batch',
    method: 'POST',
    path: `${V2}/batches/test`,
    headers: xml,
    body: () => batchXml([create('a', 'Test')]),
    permission: 'write',
  },
  { name: 'v2 batch status', method: 'GET', path: `${V2}/batches/${randomUUID()}/status`, permission: 'read' },
  { name: 'v2 batch detail (extension)', method: 'GET', path: `${V2}/batches/${randomUUID()}/detail`, permission: 'read' },
  { name: 'v2 batch result', method: 'GET', path: `${V2}/batches/${randomUUID()}/result`, permission: 'read' },
  { name: 'v2 entity', method: 'GET', path: `${V2}/entities/1`, permission: 'read' },
  { name: 'v2 revision', method: 'GET', path: `${V2}/entities/1/revision/${randomUUID()}`, permission: 'read' },
  { name: 'v2 search', method: 'POST', path: `${V2}/search?page=1&pageSize=10`, headers: json, body: () => '{}', permission: 'read' },
  {
    name: 'v2 updates',
    method: 'GET',
    path: `${V2}/updates?fromTransId=${randomUUID()}&toTransId=${randomUUID()}&page=1&pageSize=10`,
    permission: 'read',
  },
  { name: 'v2 updates from', method: 'GET', path: `${V2}/updates/from/${randomUUID()}`, permission: 'read' },
  {
    name: 'v2 export snapshots',
    method: 'POST',
    path: `${V2}/export/snapshots`,
    headers: json,
    body: () => '[999999991]',
    permission: 'export',
  },
  {
    name: 'v2 export revisions',
    method: 'POST',
    path: `${V2}/export/revisions?fromTransId=${randomUUID()}`,
    headers: json,
    body: () => '[]',
    permission: 'export',
  },
  { name: 'v2 export status', method: 'GET', path: `${V2}/export/status/${randomUUID()}`, permission: 'read' },
  { name: 'v2 export detail (extension)', method: 'GET', path: `${V2}/export/${randomUUID()}/detail`, permission: 'read' },
  { name: 'v2 export download', method: 'GET', path: `${V2}/export/download/${randomUUID()}`, permission: 'export' },
  { name: 'v1 entity', method: 'GET', path: '/api/v1/entities/1', permission: 'read' },
  { name: 'v1 batch response', method: 'GET', path: `/api/v1/batches/${randomUUID()}/response`, permission: 'read' },
  { name: 'v1 search', method: 'POST', path: '/api/v1/search?page=1&pageSize=10', headers: json, body: () => '{}', permission: 'read' },
  { name: 'v1 updates from', method: 'GET', path: `/api/v1/updates/from/${randomUUID()}`, permission: 'read' },
  {
    name: 'v1 export snapshots',
    method: 'POST',
    path: '/api/v1/export/snapshots',
    headers: json,
    body: () => '["1"]',
    permission: 'export',
  },
  {
    name: 'v1 export revisions',
    method: 'POST',
    path: `/api/v1/export/revisions?fromTransId=${randomUUID()}`,
    headers: json,
    body: () => '[]',
    permission: 'export',
  },
  { name: 'v1 submit batch', method: 'POST', path: '/api/v1/batches', headers: xml, body: () => '<bu', permission: 'write' },
  {
    name: 'v1 updates',
    method: 'GET',
    path: `/api/v1/updates?fromTransId=${randomUUID()}&toTransId=${randomUUID()}&page=1&pageSize=10`,
    permission: 'read',
  },
];

/** Which test tokens hold each permission (admin holds all). */
const HOLDERS: Record<RouteCase['permission'], Token[]> = {
  read: ['admin', 'read', 'write', 'force', 'export'],
  write: ['admin', 'write', 'force'],
  export: ['admin', 'export'],
};
const ALL_TOKENS = Object.keys(TEST_TOKENS) as Token[];

describe('security', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ env: { BATCH_MAX_BYTES: String(64 * 1024) } });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const call = (route: RouteCase, as: Token | null) =>
    harness.api(route.path, { method: route.method, headers: route.headers, body: route.body?.(), as });

  describe.each(ROUTES)('$name needs $permission', (route) => {
    it('answers 401 without a token', async () => {
      const response = await call(route, null);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it.each(ALL_TOKENS)('as %s', async (token) => {
      const response = await call(route, token);
      if (HOLDERS[route.permission].includes(token)) {
        expect([401, 403]).not.toContain(response.status);
        expect(response.status).toBeLessThan(500);
      } else {
        expect(response.status).toBe(403);
        expect(await response.json()).toMatchObject({ code: 'Forbidden' });
      }
    });
  });

  it('records the authenticated principal on the batch and on every revision it wrote (the XML sender grants nothing)', async () => {
    const entityType = `T-${randomUUID()}`;
    const response = await harness.api(`${V2}/batches`, {
      method: 'POST',
      headers: xml,
      body: batchXml([create('a', 'Audit A', { entityType }), create('b', 'Audit B', { entityType })]),
      as: 'write',
    });
    const updateRequestId = (await response.json()) as string;
    expect((await batchEnded(harness, updateRequestId)).status).toBe('COMPLETED');
    const [batch] = await harness.sql<{ submitted_by: string }>('select submitted_by from batch where id = $1', [updateRequestId]);
    expect(batch!.submitted_by).toBe('test-writer');
    const revisions = await harness.sql<{ principal: string; user_name: string }>(
      'select principal, user_name from revision where batch_id = $1',
      [updateRequestId],
    );
    expect(revisions).toHaveLength(2);
    for (const revision of revisions) expect(revision).toEqual({ principal: 'test-writer', user_name: 'Jana Nováková' });
  });

  describe('hostile input gets a clear 4xx and the service stays healthy', () => {
    const hostile: {
      name: string;
      method?: string;
      path: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      status: number;
      code: string;
    }[] = [
      {
        name: 'a DTD with an external entity (XXE)',
        path: `${V2}/batches`,
        headers: xml,
        body: '<?xml version="1.0"?><!DOCTYPE b [<!ENTITY x SYSTEM "file:///etc/passwd">]><batchUpdate xmlns="http://cam.tacr.cz/2025">&x;</batchUpdate>',
        status: 400,
        code: 'InvalidXml',
      },
      {
        name: 'an entity-expansion bomb',
        path: `${V2}/batches`,
        headers: xml,
        body: `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('')}]><batchUpdate xmlns="http://cam.tacr.cz/2025">&lol9;</batchUpdate>`,
        status: 400,
        code: 'InvalidXml',
      },
      {
        name: 'nesting deeper than the limit',
        path: `${V2}/batches`,
        headers: xml,
        body: `<batchUpdate xmlns="http://cam.tacr.cz/2025">${'<a>'.repeat(5_000)}${'</a>'.repeat(5_000)}</batchUpdate>`,
        status: 400,
        code: 'InvalidXml',
      },
      {
        name: 'invalid UTF-8',
        path: `${V2}/batches`,
        headers: xml,
        body: Buffer.concat([
          Buffer.from('<batchUpdate xmlns="http://cam.tacr.cz/2025"><info><sender><id>'),
          Buffer.from([0xc3, 0x28, 0xff]),
          Buffer.from('</id></sender></info></batchUpdate>'),
        ]),
        status: 400,
        code: 'InvalidXml',
      },
      {
        name: 'a declared body over the limit',
        path: `${V2}/batches`,
        headers: { ...xml, 'content-length': String(10 * 1024 * 1024) },
        body: 'x'.repeat(10 * 1024 * 1024),
        status: 413,
        code: 'PayloadTooLarge',
      },
      { name: 'a JSON body to an XML route', path: `${V2}/batches`, headers: json, body: '{}', status: 415, code: 'UnsupportedMediaType' },
      {
        name: 'an XML body to a JSON route',
        path: `${V2}/search?page=1&pageSize=10`,
        headers: xml,
        body: '<x/>',
        status: 415,
        code: 'UnsupportedMediaType',
      },
      {
        name: 'malformed JSON',
        path: `${V2}/search?page=1&pageSize=10`,
        headers: json,
        body: '{"types": [',
        status: 400,
        code: 'BadRequest',
      },
      {
        name: 'a non-numeric page',
        method: 'GET',
        path: `${V2}/updates?fromTransId=${randomUUID()}&toTransId=${randomUUID()}&page=x&pageSize=10`,
        status: 400,
        code: 'BadRequest',
      },
      {
        name: 'a negative page',
        method: 'GET',
        path: `${V2}/updates?fromTransId=${randomUUID()}&toTransId=${randomUUID()}&page=-1&pageSize=10`,
        status: 400,
        code: 'BadRequest',
      },
      // Any string is an entity reference on the real interface: one that names no record is unknown (404), never a 400.
      {
        name: 'an out-of-range identifier',
        method: 'GET',
        path: `${V2}/entities/123456789012345678901234567890`,
        status: 404,
        code: 'EntityNotFound',
      },
      {
        name: 'a SQL-looking identifier',
        method: 'GET',
        path: `${V2}/entities/1%3B%20drop%20table%20entity`,
        status: 404,
        code: 'EntityNotFound',
      },
      { name: 'an unknown route', method: 'GET', path: '/api/v2/nothing-here', status: 404, code: 'NotFound' },
      { name: 'an unsupported method', method: 'DELETE', path: `${V2}/batches`, status: 405, code: 'MethodNotAllowed' },
    ];

    it.each(hostile)('$name', async (probe) => {
      const response = await harness.api(probe.path, { method: probe.method ?? 'POST', headers: probe.headers, body: probe.body });
      expect(response.status).toBe(probe.status);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await response.json()) as { code: string; requestId: string; detail: string };
      expect(problem.code).toBe(probe.code);
      expect(problem.requestId).toBe(response.headers.get('x-request-id'));
      expect((await harness.api('/health')).status).toBe(200);
    });

    it('names the methods a path allows when refusing another (405 with Allow)', async () => {
      const response = await harness.api(`${V2}/batches`, { method: 'DELETE' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(((await response.json()) as { detail: string }).detail).toContain('allowed: POST');
      const unknownMethod = await harness.api(`${V2}/entities/1`, { method: 'PROPFIND' });
      expect(unknownMethod.status).toBe(405);
      expect(unknownMethod.headers.get('allow')).toContain('GET');
    });

    it('names the bad field of a JSON body that is not the expected shape', async () => {
      const response = await harness.api(`${V2}/search?page=1&pageSize=10`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ cond: { condType: 'value', comparator: 'CT_NOPE', value: 'x' } }),
      });
      expect(response.status).toBe(400);
      const problem = (await response.json()) as { errors: { path: string }[] };
      expect(problem.errors.map((error) => error.path).join(' ')).toContain('comparator');
    });

    it('refuses a chunked body that grows over the limit while it is read (413)', async () => {
      const url = new URL(`${harness.baseUrl}${V2}/batches`);
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', headers: { ...xml, authorization: `Bearer ${TEST_TOKENS.write}`, 'transfer-encoding': 'chunked' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        for (let i = 0; i < 20; i += 1) req.write('x'.repeat(8 * 1024));
        req.end();
      });
      expect(status).toBe(413);
      expect((await harness.api('/health')).status).toBe(200);
    });
  });

  it('hides the internals of a 5xx and keeps the request id', async () => {
    // A database without the schema makes every query fail inside PostgreSQL (relation does not exist).
    const url = new URL(harness.config.DATABASE_URL);
    url.pathname = `/er_unmigrated_${process.pid}`;
    await ensureDatabase(url.toString());
    const broken = await openDb(url.toString());
    const app = buildApp({
      config: harness.config,
      db: broken,
      temporal: harness.temporal,
      log: createLogger('silent', 'test'),
      tokens: 'disabled',
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/entities/1`);
      expect(response.status).toBe(500);
      const problem = (await response.json()) as Record<string, unknown>;
      expect(problem).toMatchObject({ code: 'InternalError', status: 500, requestId: response.headers.get('x-request-id') });
      expect(JSON.stringify(problem)).not.toMatch(/select|entity where|pool|stack|at /i);
    } finally {
      server.close();
      await broken.close();
      const admin = new pg.Client({ connectionString: withDatabaseUser(harness.config.DATABASE_URL) });
      await admin.connect();
      await admin.query(`drop database if exists ${pg.escapeIdentifier(url.pathname.slice(1))} with (force)`);
      await admin.end();
    }
  });
});

describe('default admin token', () => {
  it('is created once in DATA_DIR, announced once by its file and never printed, kept private, and authenticates', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'entity-records-tokens-'));
    const lines: string[] = [];
    const first = loadTokens({ DATA_DIR: dataDir }, (line) => lines.push(line));
    const second = loadTokens({ DATA_DIR: dataDir }, (line) => lines.push(line));
    expect(lines).toHaveLength(1);
    const token = readFileSync(join(dataDir, 'secrets', 'admin-token'), 'utf8').trim();
    // Announced by its file, never printed (standard output ends up in container logs); 256 bits.
    expect(lines[0]).toContain(join(dataDir, 'secrets', 'admin-token'));
    expect(lines[0]).not.toContain(token);
    expect(Buffer.from(token, 'base64url').length).toBe(32);
    expect(statSync(join(dataDir, 'secrets', 'admin-token')).mode & 0o077).toBe(0);
    expect(first.authenticate(token)?.permissions.has('admin')).toBe(true);
    expect(second.authenticate(token)?.name).toBe('admin');
    expect(second.authenticate(`${token}x`)).toBeUndefined();
  });

  it('a 401 says whether the token was missing or matched none, and where this server keeps the admin token it generated', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'entity-records-tokens-'));
    const generated = await startHarness({ worker: false, env: { AUTH_TOKENS: '', DATA_DIR: dataDir } });
    const configured = await startHarness({ worker: false });
    try {
      const file = join(dataDir, 'secrets', 'admin-token');
      const refusal = async (server: Harness, headers: Record<string, string>) => {
        const response = await fetch(`${server.baseUrl}/api/v2/entities/1`, { headers });
        expect(response.status).toBe(401);
        return (await response.json()) as { detail: string; properties: { reason: string } };
      };
      const missing = await refusal(generated, {});
      expect(missing.properties.reason).toBe('NoCredentials');
      expect(missing.detail).toMatch(/^no Authorization header: send "Authorization: Bearer <token>"/);
      expect(missing.detail).toContain(`admin token is in ${file}`);
      const wrong = await refusal(generated, { authorization: 'Bearer not-this-servers-token' });
      expect(wrong.properties.reason).toBe('UnknownToken');
      expect(wrong.detail).toMatch(/^the bearer token matches no token configured on this server/);
      expect(wrong.detail).toContain(`admin token is in ${file}`);
      // As the start announces it and the README says: the token is never printed, only its file named.
      expect(wrong.detail).toContain('created at its first start and never printed');
      const other = await refusal(generated, { authorization: 'Basic dXNlcjpwYXNz' });
      expect(other.properties.reason).toBe('UnsupportedScheme');
      // With AUTH_TOKENS configured no token was generated, and none is named.
      for (const headers of [{}, { authorization: 'Bearer not-this-servers-token' }] as Record<string, string>[])
        expect((await refusal(configured, headers)).detail).not.toContain('admin-token');
    } finally {
      await generated.close();
      await configured.close();
    }
  });

  it('takes configured tokens, also as SHA-256 hashes, and refuses a malformed list at start', () => {
    const hash = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'; // sha256("test")
    const tokens = loadTokens(
      { DATA_DIR: '/nonexistent', AUTH_TOKENS: JSON.stringify([{ tokenSha256: hash, name: 'hashed', permissions: ['read'] }]) },
      () => undefined,
    );
    expect(tokens.authenticate('test')?.name).toBe('hashed');
    expect(() =>
      loadTokens({ DATA_DIR: '/nonexistent', AUTH_TOKENS: '[{"token":"short","name":"x","permissions":["read"]}]' }, () => undefined),
    ).toThrow(/AUTH_TOKENS/);
    // Plain tokens of fewer than 32 characters are refused at start; hashed entries are exempt.
    expect(() =>
      loadTokens(
        { DATA_DIR: '/nonexistent', AUTH_TOKENS: `[{"token":"${'a'.repeat(31)}","name":"x","permissions":["read"]}]` },
        () => undefined,
      ),
    ).toThrow(/at least 32 characters/);
    expect(
      loadTokens(
        { DATA_DIR: '/nonexistent', AUTH_TOKENS: `[{"token":"${'a'.repeat(32)}","name":"x","permissions":["read"]}]` },
        () => undefined,
      ).authenticate('a'.repeat(32))?.name,
    ).toBe('x');
    expect(() => loadTokens({ DATA_DIR: '/nonexistent', AUTH_TOKENS: 'not json' }, () => undefined)).toThrow(/AUTH_TOKENS/);
  });
});
