// The OpenAPI documents are the contract: every route the app serves is
// documented with the same path parameters, every documented operation is
// served, the documents are valid OpenAPI 3.1, and the running service
// answers what they say (parameter names, bounds, permissions, statuses,
// media types and JSON shapes).
import { randomUUID } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.ts';
import {
  API_VERSIONS,
  readOpenApiDocument,
  servedOpenApiDocument,
  type ApiVersion,
  type OpenApiDocument,
} from '../../api/docs/documents.ts';
import { listRoutes } from '../../api/docs/list-routes.ts';
import { PROBLEM_CODES } from '../../api/problems.ts';
import { createLogger } from '../../logger.ts';
import { batchXml, create } from '../support/batches.ts';
import { documentOperations, type DocumentOperation } from '../support/openapi-operations.ts';
import { startHarness, type Harness, type TEST_TOKENS } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

type TokenName = keyof typeof TEST_TOKENS;

interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  examples?: unknown[];
  default?: unknown;
}
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  example?: unknown;
  schema: Schema;
}
interface MediaType {
  schema?: Schema;
}
interface DocumentedResponse {
  content?: Record<string, MediaType>;
  headers?: Record<string, unknown>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  security?: Array<Record<string, string[]>>;
  responses: Record<string, DocumentedResponse>;
}
type DocumentedOperation = DocumentOperation<Operation, Parameter> & { version: ApiVersion };
interface ProblemBody {
  code?: string;
  errors?: Array<{ path?: string; message: string }>;
}

/** Served, but not part of either API contract (OAI-PMH is its own protocol). */
const NOT_IN_CONTRACT = new Set([
  'GET /oai',
  'POST /oai',
  'GET /health',
  'GET /metrics',
  'GET /docs',
  'GET /docs/v2',
  'GET /docs/v1',
  'GET /docs/assets/{file}',
  'GET /docs/schemas',
  'GET /docs/schemas/{file}',
]);

/** The record pages (/global) are HTML for people, not part of either API contract. */
const isRecordPage = (path: string) => path === '/global' || path.startsWith('/global/');

/** A test token that lacks each permission (admin holds every permission, so read has none). */
const LACKING: Record<string, TokenName | undefined> = { read: undefined, write: 'read', export: 'write', force: 'write' };

let harness: Harness;
/** As served, $refs resolved. */
const documents = new Map<ApiVersion, OpenApiDocument>();
let operations: DocumentedOperation[] = [];

beforeAll(async () => {
  harness = await startHarness();
  for (const version of API_VERSIONS) {
    const response = await harness.api(`/api/${version}/openapi.json`, { as: null });
    expect(response.status).toBe(200);
    documents.set(version, (await SwaggerParser.dereference((await response.json()) as never)) as OpenApiDocument);
  }
  operations = API_VERSIONS.flatMap((version) => documentedOperations(version, documents.get(version)!));
});

afterAll(async () => {
  await harness?.close();
});

describe('the documents', () => {
  it.each(API_VERSIONS)("%s is served without a token as JSON, and is the YAML contract with this deployment's limits", async (version) => {
    const response = await harness.api(`/api/${version}/openapi.json`, { as: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const served = await response.json();
    expect(served).toEqual(servedOpenApiDocument(version, harness.config));
    // The harness runs on the default limits, which the YAML states.
    expect(served).toEqual(readOpenApiDocument(version));
  });

  it.each(API_VERSIONS)('%s is valid OpenAPI 3.1 (as written and as served)', async (version) => {
    const written = readOpenApiDocument(version);
    expect(written.openapi).toMatch(/^3\.1\.\d+$/);
    await expect(SwaggerParser.validate(structuredClone(written) as never)).resolves.toBeDefined();
    const served = await (await harness.api(`/api/${version}/openapi.json`, { as: null })).json();
    await expect(SwaggerParser.validate(served as never)).resolves.toBeDefined();
  });

  it('serves configured limits in place of the defaults', () => {
    const document = servedOpenApiDocument('v2', { ...harness.config, SEARCH_MAX_PAGE_SIZE: 50, EXPORT_MAX_IDS: 7 }) as never as {
      paths: Record<string, { post: { parameters: Parameter[] } }>;
      components: { schemas: Record<string, Schema> };
    };
    const pageSize = document.paths['/search']!.post.parameters.find((parameter) => parameter.name === 'pageSize')!;
    expect(pageSize.schema.maximum).toBe(50);
    expect(document.components.schemas.ExportIdList!.maxItems).toBe(7);
  });

  it.each(API_VERSIONS)('%s lists exactly the problem codes the service uses', (version) => {
    const problem = schemaOf(version, 'Problem');
    expect(problem.properties!.code!.enum).toEqual([...PROBLEM_CODES]);
  });

  it('gives every path and query parameter an example the tests can send', () => {
    for (const { fullPath, method, parameters } of operations) {
      for (const parameter of parameters.filter((p) => p.in === 'path' || p.in === 'query')) {
        expect(exampleOf(parameter), `${method} ${fullPath} ${parameter.in} ${parameter.name}`).toBeDefined();
      }
    }
  });
});

describe('routes and documents agree', () => {
  it("documents every served route in its version's document with the same path parameters, and serves every documented one", () => {
    const app = buildApp({
      config: harness.config,
      db: harness.db,
      temporal: harness.temporal,
      log: createLogger('silent', 'test'),
      tokens: 'disabled',
    });
    const served = listRoutes(app);
    const documented = new Map(operations.map((operation) => [`${operation.method} ${operation.fullPath}`, operation]));

    const undocumented: string[] = [];
    for (const route of served) {
      const key = `${route.method} ${route.path}`;
      if (NOT_IN_CONTRACT.has(key) || isRecordPage(route.path)) continue;
      const operation = documented.get(key);
      if (!operation) {
        undocumented.push(key);
        continue;
      }
      const version = /^\/api\/(v\d+)\//.exec(route.path)?.[1];
      if (version) expect(operation.version, key).toBe(version);
      const templateParams = [...operation.docPath.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const pathParams = operation.parameters.filter((parameter) => parameter.in === 'path');
      expect(templateParams.sort(), `${key}: path template`).toEqual([...route.params].sort());
      expect(pathParams.map((parameter) => parameter.name).sort(), `${key}: path parameters`).toEqual([...route.params].sort());
      for (const parameter of pathParams) expect(parameter.required, `${key}: ${parameter.name} required`).toBe(true);
    }
    expect(undocumented, 'served but not documented').toEqual([]);

    const servedKeys = new Set(served.map((route) => `${route.method} ${route.path}`));
    expect(
      [...documented.keys()].filter((key) => !servedKeys.has(key)),
      'documented but not served',
    ).toEqual([]);
    expect(
      [...NOT_IN_CONTRACT].filter((key) => !servedKeys.has(key)),
      'listed as outside the contract but not served',
    ).toEqual([]);
  });

  it('answers 405 MethodNotAllowed for a method a documented path does not serve', async () => {
    const probes = new Map(operations.map((operation) => [operation.fullPath, operation]));
    for (const [fullPath, probe] of probes) {
      const response = await harness.api(concretePath(probe), { method: 'DELETE' });
      expect(response.status, fullPath).toBe(405);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await response.json()) as ProblemBody).code).toBe('MethodNotAllowed');
    }
  });
});

describe('the service answers as documented', () => {
  it('takes every documented parameter under its documented name (documented examples, every operation)', async () => {
    for (const operation of operations) {
      const response = await call(operation);
      await expectDocumented(operation, response, { noParameterErrors: true });
    }
  });

  it('refuses a request without a required query parameter, naming it', async () => {
    for (const operation of operations) {
      for (const parameter of operation.parameters.filter((p) => p.in === 'query' && p.required)) {
        const response = await call(operation, { omit: parameter.name });
        const body = await expectDocumented(operation, response);
        expect(response.status, `${label(operation)} without ${parameter.name}`).toBe(400);
        expect(errorPaths(body), `${label(operation)} without ${parameter.name}`).toContain(`query.${parameter.name}`);
      }
    }
  });

  it('enforces each documented bound and value set of path and query parameters', async () => {
    for (const operation of operations) {
      for (const parameter of operation.parameters.filter((p) => p.in === 'path' || p.in === 'query')) {
        const { schema } = parameter;
        const where = `${parameter.in}.${parameter.name}`;
        for (const bad of invalidValues(schema)) {
          const response = await call(operation, { set: { [parameter.name]: bad } });
          const body = await expectDocumented(operation, response);
          expect(response.status, `${label(operation)} ${where}=${bad.slice(0, 40)}`).toBe(400);
          if (body.code !== 'PageSizeTooLarge')
            expect(errorPaths(body), `${label(operation)} ${where}=${bad.slice(0, 40)}`).toContain(where);
        }
        for (const edge of [schema.minimum, schema.maximum]) {
          if (edge === undefined) continue;
          const response = await call(operation, { set: { [parameter.name]: String(edge) } });
          const body = await expectDocumented(operation, response, { noParameterErrors: true });
          expect(body.code, `${label(operation)} ${where}=${edge}`).not.toBe('PageSizeTooLarge');
        }
      }
    }
  });

  it('asks for a token where the document says so (401) and for the documented permission (403)', async () => {
    for (const operation of operations) {
      const role = requiredPermission(operation);
      const anonymous = await call(operation, { as: null });
      if (role === null) {
        expect(anonymous.status, label(operation)).not.toBe(401);
        await anonymous.body?.cancel();
        continue;
      }
      await expectDocumented(operation, anonymous);
      expect(anonymous.status, label(operation)).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);
      const lacking = LACKING[role];
      if (lacking === undefined) continue;
      const forbidden = await call(operation, { as: lacking });
      const body = await expectDocumented(operation, forbidden);
      expect(forbidden.status, `${label(operation)} as ${lacking}`).toBe(403);
      expect(body.code).toBe('Forbidden');
    }
  });

  it('answers a batch and an export with the documented status JSON, media types and headers', async () => {
    const tag = randomUUID();
    const entityUuid = randomUUID();
    const submit = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('e1', `Contract ${tag}`, { entityType: `T-${tag}`, entityUuid })]),
    });
    const updateRequestId = (await expectDocumented(find('v2', 'POST', '/batches'), submit)) as unknown as string;
    expect(submit.status).toBe(200);
    expect(submit.headers.get('location')).toBe(`/api/v2/batches/${updateRequestId}/detail`);

    const statusOperation = find('v2', 'GET', '/batches/{updateRequestId}/status');
    await eventually(async () => {
      const response = await harness.api(`/api/v2/batches/${updateRequestId}/status`);
      const status = (await expectDocumented(statusOperation, response)) as { state: string };
      return status.state === 'FINISHED' || status.state === 'ERROR' ? status : undefined;
    });
    await expectDocumented(
      find('v2', 'GET', '/batches/{updateRequestId}/detail'),
      await harness.api(`/api/v2/batches/${updateRequestId}/detail`),
    );
    await expectDocumented(
      find('v2', 'GET', '/batches/{updateRequestId}/result'),
      await harness.api(`/api/v2/batches/${updateRequestId}/result`),
    );

    const entityOperation = find('v2', 'GET', '/entities/{entityId}');
    const entity = await harness.api(`/api/v2/entities/${entityUuid}`);
    await expectDocumented(entityOperation, entity);
    expect(entity.status).toBe(200);
    const notModified = await harness.api(`/api/v2/entities/${entityUuid}`, { headers: { 'if-none-match': entity.headers.get('etag')! } });
    await expectDocumented(entityOperation, notModified);
    expect(notModified.status).toBe(304);
    await expectDocumented(find('v1', 'GET', '/entities/{apid}'), await harness.api(`/api/v1/entities/${entityUuid}`));

    const start = await harness.api('/api/v2/export/snapshots', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([entityUuid, '999999999999']),
    });
    await expectDocumented(find('v2', 'POST', '/export/snapshots'), start.clone());
    expect(start.status).toBe(200);
    const started = { id: await start.text() };
    const exportStatus = find('v2', 'GET', '/export/status/{id}');
    await eventually(async () => {
      const response = await harness.api(`/api/v2/export/status/${started.id}`);
      const status = (await expectDocumented(exportStatus, response)) as { state: string };
      return status.state === 'FINISHED' || status.state === 'ERROR' ? status : undefined;
    });
    const detail = await harness.api(`/api/v2/export/${started.id}/detail`);
    const finished = (await expectDocumented(find('v2', 'GET', '/export/{id}/detail'), detail)) as { status: string };
    expect(finished.status).toBe('COMPLETED');
    const download = await harness.api(`/api/v2/export/download/${started.id}`, { headers: { 'accept-encoding': 'identity' } });
    await expectDocumented(find('v2', 'GET', '/export/download/{id}'), download);
    expect(download.status).toBe(200);
    expect(download.headers.get('x-content-sha256')).toMatch(/^[0-9a-f]{64}$/);
  });
});

// --- the documents, read ---

function documentedOperations(version: ApiVersion, document: OpenApiDocument): DocumentedOperation[] {
  return documentOperations<Operation, Parameter>(document).map((operation) => ({ version, ...operation }));
}

function find(version: ApiVersion, method: string, docPath: string): DocumentedOperation {
  const found = operations.find(
    (operation) => operation.version === version && operation.method === method && operation.docPath === docPath,
  );
  if (!found) throw new Error(`${version} documents no ${method} ${docPath}`);
  return found;
}

function schemaOf(version: ApiVersion, name: string): Schema {
  return (documents.get(version)!.components as { schemas: Record<string, Schema> }).schemas[name]!;
}

function label(operation: DocumentedOperation): string {
  return `${operation.method} ${operation.fullPath}`;
}

/** The permission named by the operation's security requirement; null for a public operation. */
function requiredPermission(operation: DocumentedOperation): string | null {
  const security = operation.operation.security;
  if (security !== undefined && security.length === 0) return null;
  const roles = security?.[0]?.bearerAuth ?? [];
  expect(roles, `${label(operation)} names one permission`).toHaveLength(1);
  // Either credential, the same permission: a bearer token or an HMAC API key.
  if (security !== undefined)
    expect(security, `${label(operation)} accepts a token or a key`).toEqual([{ bearerAuth: roles }, { ndaHmac: roles }]);
  return roles[0]!;
}

function exampleOf(parameter: Parameter): string | undefined {
  const value = parameter.example ?? parameter.schema.examples?.[0] ?? parameter.schema.default;
  return value === undefined ? undefined : String(value);
}

/** Values each documented constraint forbids, as they would appear in a URL. */
function invalidValues(schema: Schema): string[] {
  const values: string[] = [];
  if (schema.enum) values.push('NOT_A_DOCUMENTED_VALUE');
  if (schema.type === 'boolean') values.push('maybe');
  if (schema.type === 'integer') {
    values.push('1.5');
    if (schema.minimum !== undefined) values.push(String(schema.minimum - 1));
    if (schema.maximum !== undefined) values.push(String(schema.maximum + 1));
  }
  if (schema.type === 'string' && !schema.enum) {
    // A value the pattern refuses: an identifier's spelling, or else a control character.
    for (const candidate of ['not-a-valid-identifier', 'a\u0000b'])
      if ((schema.format === 'uuid' || schema.pattern) && !(schema.pattern && new RegExp(schema.pattern, 'u').test(candidate))) {
        values.push(candidate);
        break;
      }
    if (schema.minLength !== undefined && schema.minLength > 0) values.push('');
    if (schema.maxLength !== undefined) values.push('x'.repeat(schema.maxLength + 1));
  }
  return values;
}

// --- requests ---

interface CallOptions {
  as?: TokenName | null;
  omit?: string;
  set?: Record<string, string>;
}

function concretePath(operation: DocumentedOperation, set: Record<string, string> = {}): string {
  return operation.fullPath.replace(/\{(\w+)\}/g, (_, name: string) => {
    const parameter = operation.parameters.find((p) => p.in === 'path' && p.name === name)!;
    return encodeURIComponent(set[name] ?? exampleOf(parameter)!);
  });
}

/** The operation with its documented example parameters (and no body), as admin unless told otherwise; public ones without a token. */
function call(operation: DocumentedOperation, options: CallOptions = {}): Promise<Response> {
  const query = new URLSearchParams();
  for (const parameter of operation.parameters) {
    if (parameter.in !== 'query' || parameter.name === options.omit) continue;
    query.set(parameter.name, options.set?.[parameter.name] ?? exampleOf(parameter)!);
  }
  const search = query.size > 0 ? `?${query}` : '';
  const as = options.as !== undefined ? options.as : requiredPermission(operation) === null ? null : 'admin';
  return harness.api(`${concretePath(operation, options.set)}${search}`, { method: operation.method, as });
}

/**
 * The answer's status is documented for the operation, its media type is one
 * documented for that status, and a JSON body matches the documented schema.
 * Returns the parsed JSON body ({} for another one).
 */
async function expectDocumented(
  operation: DocumentedOperation,
  response: Response,
  options: { noParameterErrors?: boolean } = {},
): Promise<ProblemBody> {
  const where = `${label(operation)} → ${response.status}`;
  const documented = operation.operation.responses[String(response.status)];
  const text = await response.text();
  expect(documented, `${where} is not documented: ${text.slice(0, 300)}`).toBeDefined();
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (!documented!.content) {
    expect(text, `${where} has no documented body`).toBe('');
    return {};
  }
  expect(Object.keys(documented!.content), where).toContain(mediaType);
  if (!mediaType.endsWith('json')) return {};
  const body = JSON.parse(text) as ProblemBody;
  const schema = documented!.content[mediaType]!.schema!;
  expect(schemaErrors(schema, body, '$'), `${where}: ${text.slice(0, 300)}`).toEqual([]);
  if (options.noParameterErrors && response.status === 400) {
    expect(
      errorPaths(body).filter((path) => /^(query|path)\./.test(path)),
      `${where}: ${text.slice(0, 300)}`,
    ).toEqual([]);
  }
  return body;
}

function errorPaths(body: ProblemBody): string[] {
  return (body.errors ?? []).flatMap((error) => (error.path === undefined ? [] : [error.path]));
}

// --- a JSON Schema check for the subset the documents use ($refs already resolved) ---

const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  uri: /^[a-z][a-z0-9+.-]*:\S+$/i,
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

function schemaErrors(schema: Schema, value: unknown, at: string): string[] {
  const errors: string[] = [];
  if (schema.oneOf || schema.anyOf) {
    const branches = (schema.oneOf ?? schema.anyOf)!;
    const matching = branches.filter((branch) => schemaErrors(branch, value, at).length === 0).length;
    if (schema.oneOf ? matching !== 1 : matching === 0) errors.push(`${at}: matches ${matching} of the alternatives`);
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = typeOf(value);
    if (!types.includes(actual) && !(actual === 'integer' && types.includes('number')))
      return [...errors, `${at}: ${actual} is not ${types.join('|')}`];
  }
  if ('const' in schema && value !== schema.const) errors.push(`${at}: is not ${String(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${at}: ${String(value)} is not one of ${schema.enum.join(', ')}`);
  if (typeof value === 'string') {
    if (schema.format && FORMATS[schema.format] && !FORMATS[schema.format]!.test(value)) errors.push(`${at}: not a ${schema.format}`);
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${at}: does not match ${schema.pattern}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${at}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${at}: above ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items)
    value.forEach((item, index) => errors.push(...schemaErrors(schema.items!, item, `${at}[${index}]`)));
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in object)) errors.push(`${at}: ${name} is missing`);
    for (const [name, item] of Object.entries(object)) {
      const property = schema.properties?.[name];
      if (property) errors.push(...schemaErrors(property, item, `${at}.${name}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: ${name} is not documented`);
    }
  }
  return errors;
}
