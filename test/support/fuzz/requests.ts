// One fuzzed request per sample: a documented route called as documented
// except for one part (method, path, query, headers, credentials or body) that is
// broken, now and then none or all of them; a few go to paths no document names.
import { METHODS } from 'node:http';
import fc from 'fast-check';
import type { XmlVersion } from '../../../domain/model.ts';
import { batchXml, create } from '../batches.ts';
import { TEST_TOKENS } from '../harness.ts';
import { schemaArbitraries } from './json-schema.ts';
import { JSON_TEXTS, mutatedBytes, mutatedJson, mutatedXml, randomBytes } from './mutations.ts';
import type { FuzzParameter, FuzzRoute } from './routes.ts';
import { flawedSignature, hostileNdaDate, malformedHmacHeaders, validSignature, type SignWith } from './signatures.ts';

export interface FuzzRequest {
  method: string;
  /** As sent on the request line: already percent-encoded (or deliberately not). */
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** Sent with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked: boolean;
  /** Sent twice at the same moment: duplicate submissions racing each other. */
  twins: boolean;
  /** Signed with an API key when sent (X-NDA-Date and Authorization), rightly or with a flaw. */
  signWith?: SignWith;
}

/** Every method Node's HTTP parser knows; CONNECT asks for a tunnel, which a plain server simply closes. */
const OTHER_METHODS = METHODS.filter((method) => method !== 'CONNECT');

const TOKENS = Object.values(TEST_TOKENS);
const junk = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((code) => code !== 0x7f)
    .map((code) => String.fromCharCode(code)),
  maxLength: 60,
});

/** An Authorization header as it stands, or a signature made when the request is sent. */
type Credential = string | SignWith;

const validToken: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TOKENS).map((token) => `Bearer ${token}`) },
  { weight: 1, arbitrary: validSignature },
);

/** Missing, empty, garbage, near-miss and wrong-scheme credentials, valid tokens spelled oddly, malformed and flawed signatures. */
const hostileToken: fc.Arbitrary<Credential | undefined> = fc.oneof(
  malformedHmacHeaders(junk),
  flawedSignature,
  fc.constant(undefined),
  fc.tuple(fc.constantFrom(...TOKENS), fc.constantFrom('bearer ', 'BEARER  ', 'Bearer\t')).map(([token, scheme]) => `${scheme}${token} `),
  junk.map((value) => `Bearer ${value}`),
  junk,
  fc
    .constantFrom(...TOKENS)
    .chain((token) =>
      fc.constantFrom(
        '',
        ' ',
        'Bearer',
        'Bearer ',
        `Basic ${Buffer.from(`${token}:`).toString('base64')}`,
        `Token ${token}`,
        token,
        `Bearer ${token} ${token}`,
        `Bearer ${token.slice(0, -1)}`,
        `Bearer ${token}0`,
        `Bearer ${token.toUpperCase()}`,
        `Bearer ${'A'.repeat(4000)}`,
        'Bearer \u00e9\u00ff',
        'Bearer null',
        'Bearer undefined',
      ),
    ),
);

/** Path segments as sent: numbers out of range, traversal, broken and overlong percent-encoding, raw Latin-1. */
const HOSTILE_SEGMENTS = [
  '',
  '0',
  '-1',
  '-0',
  '00001',
  '1.5',
  '1e3',
  '0x1F',
  '+1',
  '%201',
  '9007199254740991',
  '9007199254740992',
  '9999999999999999',
  '99999999999999999999999999999999',
  '18446744073709551616',
  '2147483648',
  'NaN',
  'Infinity',
  'null',
  'undefined',
  'true',
  '.',
  '..',
  '../..',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2f',
  '..;',
  '....//',
  '%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%ED%A0%80',
  '%FF',
  '%2F',
  '%25',
  '%252e',
  '\u00e9',
  '\u00ff\u00fe',
  'a'.repeat(2000),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '{3f2b8c1e-6a4d-4e2f-9b7a-1c5d8e9f0a12}',
  '3f2b8c1e6a4d4e2f9b7a1c5d8e9f0a12',
  '3f2b8c1e-6a4d-4e2f-9b7a-1c5d8e9f0a1',
  '3F2B8C1E-6A4D-4E2F-9B7A-1C5D8E9F0A12',
  'urn:uuid:3f2b8c1e-6a4d-4e2f-9b7a-1c5d8e9f0a12',
  "'%20OR%201=1--",
  '%3Cscript%3E',
  '__proto__',
  'constructor',
  'prototype',
  'openapi.json',
];

const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.stringMatching(/^-?[0-9]{17,40}$/) },
  { weight: 1, arbitrary: fc.uuid().map((uuid) => uuid.toUpperCase()) },
);

const PATH_MUTATIONS: Array<(path: string) => string> = [
  (path) => `${path}/`,
  (path) => path.replaceAll('/', '//'),
  (path) => path.toUpperCase(),
  (path) => `${path}/extra`,
  (path) => `${path}/..`,
  (path) => `${path}/.`,
  (path) => `${path}%00`,
  (path) => `${path};jsessionid=1`,
  (path) => `${path}.json`,
  (path) => `/${path.slice(1).replaceAll('/', '%2F')}`,
  (path) => path.replace(/^\/api\/v\d+/, (prefix) => `${prefix}/..${prefix}`),
  (path) => path.replace(/^\/api\/v\d+/, '/api/v3'),
];

/** Paths outside the documents: what the app serves besides them, and what nothing serves. */
const STRAY_PATHS = [
  '/',
  '//',
  '*',
  '/api',
  '/api/v2',
  '/api/v2/',
  '/api/v1/',
  '/metrics',
  '/docs',
  '/docs/v2',
  '/docs/assets/..%2F..%2F..%2Fpackage.json',
  '/docs/assets/%2e%2e%2fdocs.js',
  '/docs/schemas/..%2F..%2Fconfig.ts',
  '/docs/schemas/entity-records-2025.xsd%00',
  '/health/',
  '/%00',
  '/api/v2/batches/../../../etc/passwd',
  '/api/v2/entities',
  '/api/v2/export',
  '/api/v2/openapi.json/..',
  '/favicon.ico',
  '/.env',
];

const QUERY_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'a[]',
  'a[b]',
  '',
  ' ',
  'page[0]',
  'pageSize[]',
  'callback',
  'format',
];
const hostileQueryValue = fc.oneof(
  hostileText,
  fc.constantFrom('', '%', '%zz', '-1', '1e400', 'yes', 'TRUE', '1.5', '[]', '{}', 'a&b', '+', '%2B', '\u00e9', 'x'.repeat(3000)),
);

const CONTENT_TYPES = [
  'application/json',
  'application/xml',
  'text/xml',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----x',
  'application/octet-stream',
  'application/problem+json',
  'application/vnd.api+json',
  'application/soap+xml',
  '*/*',
  'application/*',
  'application/',
  '/',
  'xml',
  'APPLICATION/XML',
  'Application/Json',
  '',
  ' ',
  'text/xml, application/json',
  '\u00e9/\u00e9',
];
const MEDIA_PARAMETERS = [
  '; charset=utf-8',
  '; charset=UTF-8',
  ';charset="utf-8"',
  '; charset=iso-8859-1',
  '; charset=utf-16',
  '; charset=ebcdic',
  '; charset=',
  '; boundary=x',
  '; a=b; c=d',
  ';',
  ';;;',
  '; charset=utf-8; charset=latin1',
];

function contentType(bodyTypes: string[]): fc.Arbitrary<string | undefined> {
  const documented = fc.constantFrom(...(bodyTypes.length > 0 ? bodyTypes : ['application/octet-stream']));
  return fc.oneof(
    { weight: bodyTypes.length > 0 ? 10 : 1, arbitrary: documented },
    {
      weight: 3,
      arbitrary: fc.tuple(documented, fc.constantFrom(...MEDIA_PARAMETERS)).map(([type, parameters]) => `${type}${parameters}`),
    },
    { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    { weight: bodyTypes.length > 0 ? 2 : 10, arbitrary: fc.constant(undefined) },
  );
}

const otherHeaders = fc.record(
  {
    accept: fc.constantFrom(
      'application/xml',
      'text/xml',
      'application/json',
      '*/*',
      'text/html',
      'application/xml;q=0.1, text/xml;q=0.9',
      'garbage',
      ';;;q=x',
      '',
    ),
    'x-request-id': fc.oneof(fc.uuid(), junk, fc.constant('x'.repeat(500))),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-junk'),
    'if-none-match': fc.constantFrom('*', 'W/"1"', '"', '"1.1", "2.2"', '"1.1"'),
    'if-modified-since': fc.constantFrom('Thu, 01 Jan 1970 00:00:00 GMT', 'yesterday'),
    range: fc.constantFrom('bytes=0-10', 'bytes=-1', 'bytes=99999999999-', 'lines=1-2'),
    'x-forwarded-for': junk,
    'x-forwarded-host': fc.oneof(junk, fc.constantFrom('records.example.org', '127.0.0.1:1, evil.example', '[::1]', '')),
    'x-nda-date': fc.oneof(hostileNdaDate, junk),
  },
  { requiredKeys: [] },
);

export interface RequestOptions {
  /** Identifiers that exist (entity numbers and UUIDs, revisions, transactions, batches, exports). */
  known: readonly string[];
}

/**
 * A batch the service would accept, each record of an entity type of its own
 * (no PreferredNameExists across test files); now and then under the UUID of
 * something that exists (a batch already written, say).
 */
function validBatch(version: XmlVersion, known: readonly string[]): fc.Arbitrary<Buffer> {
  const records = fc.array(fc.record({ type: fc.uuid(), name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }) }), {
    minLength: 1,
    maxLength: 3,
  });
  const knownUuids = known.filter((value) => value.includes('-'));
  const uuid =
    knownUuids.length === 0
      ? fc.uuid()
      : fc.oneof({ weight: 6, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom(...knownUuids) });
  return fc.tuple(uuid, records).map(([uuid, entities]) =>
    Buffer.from(
      batchXml(
        entities.map(({ type, name }, index) => create(`r${index}`, name, { entityType: `FUZZ-${type}` })),
        { uuid, version },
      ),
    ),
  );
}

function hostileXmlBody(version: XmlVersion, known: readonly string[]): fc.Arbitrary<Buffer> {
  const own = validBatch(version, known);
  return fc.oneof(
    { weight: 8, arbitrary: mutatedXml(own) },
    { weight: 1, arbitrary: validBatch(version === 'v1' ? 'v2' : 'v1', known) },
    { weight: 1, arbitrary: randomBytes },
  );
}

function hostileJsonBody(value: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer> {
  const text = value.map((one) => Buffer.from(JSON.stringify(one) ?? ''));
  return fc.oneof(
    { weight: 4, arbitrary: mutatedJson(value).map((one) => Buffer.from(JSON.stringify(one) ?? '')) },
    { weight: 1, arbitrary: mutatedBytes(text) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((one) => Buffer.from(JSON.stringify(one))) },
    { weight: 2, arbitrary: fc.constantFrom(...JSON_TEXTS) },
    { weight: 1, arbitrary: randomBytes },
  );
}

/** The parts of a request, each generated valid or broken. */
interface RequestParts {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  token: Credential | undefined;
  body: { bytes: Buffer | undefined; chunked: boolean };
}
type Aspect = keyof RequestParts;
type PartArbitraries = { [A in Aspect]: fc.Arbitrary<RequestParts[A]> };
const ASPECTS: readonly Aspect[] = ['method', 'path', 'query', 'headers', 'token', 'body'];

function routeRequest(route: FuzzRoute, options: RequestOptions): fc.Arbitrary<Omit<FuzzRequest, 'twins'>> {
  const valid = routeParts(route, options, false);
  const hostile = routeParts(route, options, true);
  const breaking = (broken: readonly Aspect[]) => {
    const pick = <A extends Aspect>(aspect: A): PartArbitraries[A] => (broken.includes(aspect) ? hostile : valid)[aspect];
    return fc.record({
      method: pick('method'),
      path: pick('path'),
      query: pick('query'),
      headers: pick('headers'),
      token: pick('token'),
      body: pick('body'),
    });
  };
  const bodyWeight = route.bodyTypes.length > 0 ? 4 : 1;
  // Mostly one part broken at a time, so that the rest passes validation and the broken part reaches the code behind it.
  return fc
    .oneof(
      { weight: 2, arbitrary: breaking([]) },
      ...ASPECTS.map((aspect) => ({ weight: aspect === 'body' ? bodyWeight : 1, arbitrary: breaking([aspect]) })),
      { weight: 1, arbitrary: breaking(ASPECTS) },
    )
    .map(assemble);
}

function assemble(parts: RequestParts): Omit<FuzzRequest, 'twins'> {
  const headers = { ...parts.headers };
  if (typeof parts.token === 'string') headers.authorization = parts.token;
  return {
    method: parts.method,
    path: parts.query === '' ? parts.path : `${parts.path}?${parts.query}`,
    headers,
    body: parts.body.bytes,
    chunked: parts.body.chunked && parts.body.bytes !== undefined && parts.body.bytes.length > 0,
    ...(typeof parts.token === 'object' ? { signWith: parts.token } : {}),
  };
}

function routeParts(route: FuzzRoute, options: RequestOptions, hostile: boolean): PartArbitraries {
  const shallow = schemaArbitraries(route.document, { known: options.known, maxDepth: 8, maxItems: 4 });
  const deep = schemaArbitraries(route.document, { known: options.known, maxDepth: 60, maxItems: 1 });
  const encoded = (parameter: FuzzParameter) => shallow(parameter.schema).map((value) => encodeURIComponent(String(value)));
  const ofKind = (kind: FuzzParameter['in']) => route.parameters.filter((parameter) => parameter.in === kind);

  const pathValue = (parameter: FuzzParameter) => (hostile ? fc.oneof(encoded(parameter), hostileText) : encoded(parameter));
  const path = fc
    .tuple(...ofKind('path').map((parameter) => pathValue(parameter).map((value) => [parameter.name, value] as const)))
    .map((values) => values.reduce<string>((template, [name, value]) => template.replace(`{${name}}`, value), route.template));

  type Pairs = Array<readonly [string, string]>;
  const none = fc.constant<Pairs>([]);
  const queryPairs = (parameter: FuzzParameter): fc.Arbitrary<Pairs> => {
    const one = encoded(parameter).map((value) => [[parameter.name, value] as const]);
    if (!hostile) return parameter.required ? one : fc.oneof(one, none);
    return fc.oneof(
      { weight: 2, arbitrary: none },
      { weight: 3, arbitrary: one },
      { weight: 3, arbitrary: hostileQueryValue.map((value) => [[parameter.name, value] as const]) },
      {
        weight: 1,
        arbitrary: fc
          .array(encoded(parameter), { minLength: 2, maxLength: 3 })
          .map((values) => values.map((value) => [parameter.name, value] as const)),
      },
    );
  };
  const unknownPairs = hostile
    ? fc.array(
        fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.string({ maxLength: 10 }).map(encodeURIComponent)), hostileQueryValue),
        { maxLength: 2 },
      )
    : fc.constant([]);
  const query = fc
    .tuple(fc.tuple(...ofKind('query').map(queryPairs)), unknownPairs)
    .map(([documented, unknown]) => [...documented.flat(), ...unknown].map(([name, value]) => `${name}=${value}`).join('&'));

  const documentedHeaders = fc.tuple(
    ...ofKind('header').map((parameter) =>
      fc.option(
        (hostile ? fc.oneof(shallow(parameter.schema).map(String), junk) : shallow(parameter.schema).map(String)).map(
          (value) => [parameter.name.toLowerCase(), value] as const,
        ),
      ),
    ),
  );
  const documentedType = route.bodyTypes.length > 0 ? fc.constantFrom(...route.bodyTypes) : fc.constant(undefined);
  const headers = fc
    .record({
      contentType: hostile ? contentType(route.bodyTypes) : documentedType,
      documented: documentedHeaders,
      other: hostile ? fc.option(otherHeaders, { freq: 2 }) : fc.constant(null),
    })
    .map(({ contentType: type, documented, other }) => ({
      ...(other ?? {}),
      ...Object.fromEntries(documented.filter((entry) => entry !== null)),
      ...(type === undefined ? {} : { 'content-type': type }),
    }));

  const isXml = route.bodyTypes.some((type) => /xml/.test(type));
  const jsonValue = route.jsonSchema
    ? fc.oneof({ weight: 4, arbitrary: shallow(route.jsonSchema) }, { weight: 1, arbitrary: deep(route.jsonSchema) })
    : undefined;
  let bytes: fc.Arbitrary<Buffer | undefined>;
  if (isXml) bytes = hostile ? hostileXmlBody(route.version, options.known) : validBatch(route.version, options.known);
  else if (jsonValue) bytes = hostile ? hostileJsonBody(jsonValue) : jsonValue.map((value) => Buffer.from(JSON.stringify(value)));
  else bytes = hostile ? fc.oneof(randomBytes, fc.constantFrom(...JSON_TEXTS)) : fc.constant(undefined);

  return {
    method: hostile ? fc.constantFrom(...OTHER_METHODS) : fc.constant(route.method),
    path: hostile
      ? fc.oneof(
          path,
          fc.tuple(path, fc.constantFrom(...PATH_MUTATIONS)).map(([one, mutate]) => mutate(one)),
        )
      : path,
    query,
    headers,
    token: hostile ? hostileToken : validToken,
    body: fc.record({ bytes, chunked: hostile ? fc.boolean() : fc.constant(false) }),
  };
}

const strayRequest: fc.Arbitrary<Omit<FuzzRequest, 'twins'>> = fc.record({
  method: fc.oneof(fc.constantFrom('GET', 'POST', 'HEAD', 'OPTIONS'), fc.constantFrom(...OTHER_METHODS)),
  path: fc.oneof(
    fc.constantFrom(...STRAY_PATHS),
    fc.webPath().map((path) => path || '/'),
  ),
  headers: fc.record({ authorization: fc.constantFrom(...TOKENS).map((token) => `Bearer ${token}`) }, { requiredKeys: [] }),
  body: fc.option(randomBytes, { nil: undefined, freq: 4 }),
  chunked: fc.constant(false),
});

/** Requests over all routes, each route as likely as any other, and a few to paths no document names. */
export function fuzzRequests(routes: readonly FuzzRoute[], options: RequestOptions): fc.Arbitrary<FuzzRequest> {
  const request = fc.oneof(...routes.map((route) => routeRequest(route, options)), { weight: 1, arbitrary: strayRequest });
  return fc
    .tuple(request, fc.integer({ min: 0, max: 19 }))
    .map(([one, dice]) => ({ ...one, path: wireSafePath(one.path), headers: wireSafeHeaders(one.headers), twins: dice === 0 }));
}

/** Node refuses to send a request line with bytes outside 0x21–0xFF: those go percent-encoded. */
function wireSafePath(path: string): string {
  const safe = path.replace(/[^\u0021-\u00ff]/gu, (char) => encodeURIComponent(char));
  return safe.startsWith('/') || safe === '*' ? safe : `/${safe}`;
}

/** Node refuses header values with control characters or code points above 0xFF. */
function wireSafeHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, value.replace(/[^\t\u0020-\u007e\u0080-\u00ff]/gu, '?')]),
  );
}
