import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { documentOperations } from '../support/openapi-operations.ts';
import { startHarness, type Harness } from '../support/harness.ts';

// Unknown query parameters are refused on /api/v1 and /api/v2 (400, naming
// them), and none of the real client's is: every query parameter of both
// reference OpenAPI documents is sent, and none is refused as unknown.

const REFERENCE = '/work/shared/reference';
const REFERENCES = { v1: `${REFERENCE}/cam-v1-openapi.yml`, v2: `${REFERENCE}/cam-v2-openapi.yml` } as const;
const UUID = '00000000-0000-4000-8000-000000000001';

describe('query parameters', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ worker: false });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('refuses a parameter an operation does not define, naming it, on v1 and v2', async () => {
    for (const path of [
      '/api/v2/entities/1?foo=1',
      '/api/v1/entities/1?5',
      `/api/v2/updates?fromTransId=${UUID}&toTransId=${UUID}&page=1&pageSize=1&pagesize=2`,
    ]) {
      const response = await harness.api(path);
      expect(response.status, path).toBe(400);
      const body = (await response.json()) as { detail: string; errors: { path: string }[] };
      expect(body.detail).toMatch(/unknown query parameter/);
      expect(body.errors.length).toBeGreaterThan(0);
    }
    // The ambiguity of the string to sign: /entities/1234?5 is not /entities/12345.
    const shifted = await harness.api('/api/v2/entities/1234?5');
    expect(shifted.status).toBe(400);
  });

  it('matches paths as the routers do, in any case and with a trailing slash', async () => {
    // The routers serve these spellings (an unknown entity is the router's EntityNotFound, not "no route")…
    for (const path of ['/API/V2/ENTITIES/999999999', '/Api/V1/Entities/999999999/']) {
      const response = await harness.api(path);
      expect(response.status, path).toBe(404);
      expect(((await response.json()) as { code: string }).code, path).toBe('EntityNotFound');
    }
    // …so their unknown query parameters are refused as the lower-case path's are.
    for (const path of [
      '/API/V2/ENTITIES/1?anything=1',
      '/Api/V1/Entities/1?5',
      '/api/v2/Entities/1/?foo=1',
      `/API/V2/UPDATES?fromTransId=${UUID}&toTransId=${UUID}&page=1&pageSize=1&pagesize=2`,
    ]) {
      const response = await harness.api(path);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { detail: string }).detail, path).toMatch(/unknown query parameter/);
    }
  });

  it.skipIf(!existsSync(REFERENCES.v1) || !existsSync(REFERENCES.v2))(
    'refuses none of the query parameters of the reference OpenAPI documents',
    async () => {
      let sent = 0;
      for (const [version, file] of Object.entries(REFERENCES)) {
        for (const operation of documentOperations(parse(readFileSync(file, 'utf8')))) {
          const query = operation.parameters
            .filter((parameter) => parameter.in === 'query')
            .map((parameter) => `${encodeURIComponent(String(parameter.name))}=1`);
          if (query.length === 0) continue;
          const path = `/api/${version}${operation.docPath.replace(/\{[^}]+\}/g, '1')}?${query.join('&')}`;
          const response = await harness.api(path, {
            method: operation.method,
            ...(operation.method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '[]' } : {}),
          });
          const text = await response.text();
          expect(text, `${operation.method} ${path}`).not.toMatch(/unknown query parameter/);
          sent += query.length;
        }
      }
      expect(sent).toBeGreaterThan(10);
    },
  );
  if (!existsSync(REFERENCES.v1)) console.warn(`SKIPPED: the reference OpenAPI documents are not at ${REFERENCE}`);
});
