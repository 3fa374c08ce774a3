// The client's address from the PROXY protocol (PROXY_PROTOCOL=true,
// api/proxy-protocol.ts): believed only from TRUSTED_PROXIES, which must
// send it; its source address is the client for the keys' allow-lists and
// the failed-authentication throttle, on Koa's routes and on the direct
// GET of a record alike. Requests go over raw TCP, header first, as HAProxy
// and nginx send them; the v2 headers are built here, apart from the
// service's parser.
import { randomInt, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../api/app.ts';
import { loadTokens } from '../../api/auth/tokens.ts';
import { parseProxyHeader } from '../../api/proxy-header.ts';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../logger.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { elzaHeaders } from '../support/nda-signer.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';

const V2_SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');

/** A v2 header: PROXY over TCP/IPv4, with a TLV after the addresses (a unique id, as HAProxy's unique-id sends). */
function proxyV2(source: string, sourcePort = 40000): Buffer {
  const head = Buffer.alloc(4);
  const ports = Buffer.alloc(4);
  ports.writeUInt16BE(sourcePort, 0);
  ports.writeUInt16BE(8080, 2);
  const body = Buffer.concat([
    Buffer.from([...source.split('.'), 127, 0, 0, 1].map(Number)),
    ports,
    Buffer.from([0x05, 0x00, 0x03, 0x61, 0x62, 0x63]),
  ]);
  head[0] = 0x21;
  head[1] = 0x11;
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([V2_SIGNATURE, head, body]);
}

/** A v2 LOCAL header: the proxy's own connection. */
const PROXY_V2_LOCAL = Buffer.concat([V2_SIGNATURE, Buffer.from([0x20, 0x00, 0, 0])]);

const proxyV1 = (source: string, sourcePort = 40000) => `PROXY TCP4 ${source} 127.0.0.1 ${sourcePort} 8080\r\n`;

interface RawAnswer {
  /** The status of each answer, in order; none when the connection was closed unanswered. */
  statuses: number[];
  text: string;
}

/** Sends `parts` over one connection to `port` (each a write of its own, a moment apart) and reads until the server closes it. */
function raw(port: number, ...parts: (string | Buffer)[]): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const writeFrom = (index: number) => {
      if (index === parts.length || socket.destroyed) return;
      socket.write(parts[index]!);
      setTimeout(() => writeFrom(index + 1), 20);
    };
    const socket = connect(port, '127.0.0.1', () => writeFrom(0));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // Reset by the server is a close as well.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])), text });
    });
  });
}

function httpGet(port: number, path: string, headers: Record<string, string> = {}, close = true): string {
  const lines = Object.entries({ host: `127.0.0.1:${port}`, ...headers, ...(close ? { connection: 'close' } : {}) }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  return `GET ${path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}

const KEYS = {
  proxied: { keyId: 'proxied-key', secret: 'proxied-key-secret-0123456789abcdef012' },
};

describe('PROXY header parsing', () => {
  it('reads v1 TCP4, TCP6 and UNKNOWN, and says how long the header is', () => {
    const line = 'PROXY TCP4 192.0.2.10 198.51.100.1 56324 443\r\n';
    expect(parseProxyHeader(Buffer.from(`${line}GET / HTTP/1.1\r\n`))).toEqual({
      kind: 'header',
      length: line.length,
      source: { address: '192.0.2.10', port: 56324, family: 'IPv4' },
    });
    expect(parseProxyHeader(Buffer.from('PROXY TCP6 2001:DB8:0:0:0:0:0:1 2001:db8::2 1 2\r\n'))).toMatchObject({
      source: { address: '2001:db8::1', port: 1, family: 'IPv6' },
    });
    expect(parseProxyHeader(Buffer.from('PROXY TCP6 ::ffff:192.0.2.7 ::1 1 2\r\n'))).toMatchObject({
      source: { address: '192.0.2.7', family: 'IPv4' },
    });
    const unknown = 'PROXY UNKNOWN whatever follows\r\n';
    expect(parseProxyHeader(Buffer.from(`${unknown}GET`))).toEqual({ kind: 'header', length: unknown.length, source: undefined });
  });

  it('reads v2 PROXY over TCP (skipping TLVs), LOCAL and UNSPEC', () => {
    const header = proxyV2('192.0.2.10', 56324);
    expect(parseProxyHeader(Buffer.concat([header, Buffer.from('GET')]))).toEqual({
      kind: 'header',
      length: header.length,
      source: { address: '192.0.2.10', port: 56324, family: 'IPv4' },
    });
    expect(parseProxyHeader(PROXY_V2_LOCAL)).toEqual({ kind: 'header', length: 16, source: undefined });
    const ipv6 = Buffer.concat([V2_SIGNATURE, Buffer.from([0x21, 0x21, 0, 36]), Buffer.alloc(36)]);
    ipv6.writeUInt16BE(0x2001, 16);
    ipv6.writeUInt16BE(0x0db8, 18);
    ipv6.writeUInt16BE(0x0001, 30);
    ipv6.writeUInt16BE(443, 48);
    expect(parseProxyHeader(ipv6)).toEqual({ kind: 'header', length: 52, source: { address: '2001:db8::1', port: 443, family: 'IPv6' } });
    const unspec = Buffer.concat([V2_SIGNATURE, Buffer.from([0x21, 0x00, 0, 0])]);
    expect(parseProxyHeader(unspec)).toEqual({ kind: 'header', length: 16, source: undefined });
  });

  it('waits for more bytes only while they could still make a header', () => {
    const header = proxyV2('192.0.2.10');
    for (const length of [1, 5, 12, 15, header.length - 1]) expect(parseProxyHeader(header.subarray(0, length)).kind).toBe('incomplete');
    for (const text of ['P', 'PROXY', 'PROXY TCP4 192.0.2.10']) expect(parseProxyHeader(Buffer.from(text)).kind).toBe('incomplete');
    for (const text of ['GET / HTTP/1.1\r\n', 'POST', 'PRI * HTTP/2.0', '\r\n\r\nGET'])
      expect(parseProxyHeader(Buffer.from(text)).kind).toBe('absent');
  });

  it('refuses what is not a header of the specification', () => {
    const malformed = [
      'PROXY TCP4 192.0.2.10 198.51.100.1 56324\r\n',
      'PROXY TCP4 2001:db8::1 198.51.100.1 1 2\r\n',
      'PROXY TCP6 192.0.2.10 2001:db8::1 1 2\r\n',
      'PROXY TCP4 192.0.2.10 198.51.100.1 65536 2\r\n',
      'PROXY TCP4 192.0.2.10 198.51.100.1 01 2\r\n',
      'PROXY TCP4 192.0.2.10  198.51.100.1 1 2\r\n',
      'PROXY UDP4 192.0.2.10 198.51.100.1 1 2\r\n',
      'PROXY TCP6 fe80::1%eth0 fe80::2 1 2\r\n',
      `PROXY TCP4 ${'1'.repeat(120)}`,
    ];
    for (const text of malformed) expect(parseProxyHeader(Buffer.from(text)).kind, text).toBe('malformed');
    const v2 = (byte12: number, byte13: number, length = 12) =>
      Buffer.concat([V2_SIGNATURE, Buffer.from([byte12, byte13, 0, length]), Buffer.alloc(length)]);
    expect(parseProxyHeader(v2(0x11, 0x11))).toMatchObject({ kind: 'malformed', problem: 'v2: the version is not 2' });
    expect(parseProxyHeader(v2(0x22, 0x11))).toMatchObject({ kind: 'malformed' });
    expect(parseProxyHeader(v2(0x21, 0x12))).toMatchObject({ kind: 'malformed' });
    expect(parseProxyHeader(v2(0x21, 0x31, 216))).toMatchObject({ kind: 'malformed' });
    expect(parseProxyHeader(v2(0x21, 0x11, 8))).toMatchObject({
      kind: 'malformed',
      problem: 'v2: the length is shorter than the addresses',
    });
  });
});

describe('the client named by a PROXY header from a trusted proxy', () => {
  let harness: Harness;
  let entityPath: string;
  const servers: Server[] = [];

  /** An API with PROXY_PROTOCOL on and these TRUSTED_PROXIES, on an ephemeral port. */
  async function proxiedApi(env: Record<string, string>): Promise<{ app: Koa; port: number }> {
    const { config, db, temporal } = harness;
    const proxied = loadConfig({
      ...process.env,
      DATABASE_URL: config.DATABASE_URL,
      DATA_DIR: config.DATA_DIR,
      API_KEYS: JSON.stringify([{ name: 'proxied', ...KEYS.proxied, permissions: ['read'], allowFrom: ['10.77.0.0/16'] }]),
      AUTH_FAILURE_LIMIT: '2',
      AUTH_FAILURE_WINDOW_SECONDS: '600',
      PROXY_PROTOCOL: 'true',
      ...env,
    });
    const app = buildApp({
      config: proxied,
      db,
      temporal,
      log: createLogger('silent', 'test'),
      tokens: loadTokens(proxied, () => undefined),
    });
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    return { app, port: (server.address() as AddressInfo).port };
  }

  let trusted: { app: Koa; port: number };
  let untrusted: { app: Koa; port: number };
  const inside = () => `10.77.${randomInt(256)}.${randomInt(1, 255)}`;
  const outside = () => `10.78.${randomInt(256)}.${randomInt(1, 255)}`;
  const signed = (port: number, path: string, headers: Record<string, string> = {}, close = true) =>
    httpGet(port, path, { ...elzaHeaders(KEYS.proxied, { host: '127.0.0.1', method: 'GET', pathAndQuery: path }), ...headers }, close);
  const refusals = async (reason: string) => {
    const { text } = await raw(trusted.port, proxyV1(inside()), httpGet(trusted.port, '/metrics', metricsAuthorization(harness.config)));
    return Number(new RegExp(`^proxy_protocol_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  };

  beforeAll(async () => {
    harness = await startHarness();
    const applied = await applyBatch(harness, batchXml([create('e1', 'Karel Hynek Mácha', { entityType: `PROXIED-${randomUUID()}` })]));
    entityPath = `/api/v2/entities/${applied.revisions.get('e1')!.entityId}`;
    trusted = await proxiedApi({ TRUSTED_PROXIES: '127.0.0.1/32,::1' });
    // Loopback is not a trusted proxy here (192.0.2.1 is a documentation address nothing connects from); its
    // failures count against loopback itself, so this one does not throttle them.
    untrusted = await proxiedApi({ TRUSTED_PROXIES: '192.0.2.1/32', AUTH_FAILURE_LIMIT: '0' });
  });
  afterAll(async () => {
    for (const server of servers) server.close();
    await harness?.close();
  });

  it('refuses to start without TRUSTED_PROXIES', () => {
    expect(() => loadConfig({ ...process.env, PROXY_PROTOCOL: 'true', TRUSTED_PROXIES: '' })).toThrow(
      /PROXY_PROTOCOL=true needs TRUSTED_PROXIES/,
    );
  });

  it("holds a key to its allow-list by the header's source, on the direct GET and through Koa, v1 and v2", async () => {
    const createContext = vi.spyOn(trusted.app, 'createContext');
    try {
      // Direct path (no Koa context made) inside the list; outside it, Koa's 401 as for any refused key.
      expect((await raw(trusted.port, proxyV1(inside()), signed(trusted.port, entityPath))).statuses).toEqual([200]);
      expect((await raw(trusted.port, proxyV2(inside()), signed(trusted.port, entityPath))).statuses).toEqual([200]);
      expect(createContext).not.toHaveBeenCalled();
      expect((await raw(trusted.port, proxyV1(outside()), signed(trusted.port, entityPath))).statuses).toEqual([401]);
      expect((await raw(trusted.port, proxyV2(outside()), signed(trusted.port, entityPath))).statuses).toEqual([401]);
      // A Koa route (the trailing slash takes the same GET through Koa's chain).
      createContext.mockClear();
      expect((await raw(trusted.port, proxyV1(inside()), signed(trusted.port, `${entityPath}/`))).statuses).toEqual([200]);
      expect((await raw(trusted.port, proxyV2(outside()), signed(trusted.port, `${entityPath}/`))).statuses).toEqual([401]);
      expect(createContext).toHaveBeenCalledTimes(2);
      // Loopback itself, the proxy, is not in the key's list: without the header's address the key is refused.
      expect((await raw(trusted.port, 'PROXY UNKNOWN\r\n', signed(trusted.port, entityPath))).statuses).toEqual([401]);
      expect((await raw(trusted.port, PROXY_V2_LOCAL, signed(trusted.port, entityPath))).statuses).toEqual([401]);
    } finally {
      createContext.mockRestore();
    }
  });

  it('keeps the address for every request of the connection, whatever way the bytes arrive', async () => {
    // The header in two writes, then two requests on the kept-alive connection.
    const header = proxyV1(inside());
    const answer = await raw(
      trusted.port,
      header.slice(0, 9),
      header.slice(9),
      signed(trusted.port, entityPath, {}, false),
      signed(trusted.port, `${entityPath}/`),
    );
    expect(answer.statuses).toEqual([200, 200]);
  });

  it("reads X-Forwarded-For only when the header's source is itself a trusted proxy", async () => {
    // The header names a proxy (loopback, trusted) that forwarded for a client inside the list.
    expect(
      (await raw(trusted.port, proxyV1('127.0.0.1'), signed(trusted.port, entityPath, { 'x-forwarded-for': inside() }))).statuses,
    ).toEqual([200]);
    // The header names a client: what that client wrote in X-Forwarded-For is its own word.
    expect(
      (await raw(trusted.port, proxyV1(outside()), signed(trusted.port, entityPath, { 'x-forwarded-for': inside() }))).statuses,
    ).toEqual([401]);
    // UNKNOWN: the connection is the proxy's, whose X-Forwarded-For is read as without the PROXY protocol.
    expect(
      (await raw(trusted.port, 'PROXY UNKNOWN\r\n', signed(trusted.port, entityPath, { 'x-forwarded-for': inside() }))).statuses,
    ).toEqual([200]);
  });

  it('throttles failed authentication per address the header names', async () => {
    const bad = (address: string) =>
      raw(trusted.port, proxyV1(address), httpGet(trusted.port, entityPath, { authorization: 'Bearer not-a-token-0000000000000000' }));
    const address = inside();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1) statuses.push(...(await bad(address)).statuses);
    expect(statuses).toEqual([401, 401, 429, 429]);
    // Another address the same proxy names is not throttled; the throttled one with valid credentials is answered as ever.
    expect((await bad(inside())).statuses).toEqual([401]);
    expect((await raw(trusted.port, proxyV1(address), signed(trusted.port, entityPath))).statuses).toEqual([200]);
  });

  it('closes, unanswered, a trusted connection whose header is malformed, missing or late', async () => {
    const before = { malformed: await refusals('malformed'), missing: await refusals('missing'), timeout: await refusals('timeout') };
    const createContext = vi.spyOn(trusted.app, 'createContext');
    try {
      const malformed = [
        ['PROXY TCP4 10.77.1.2 not-an-address 1 2\r\n', httpGet(trusted.port, '/health')],
        ['PROXY TCP4 10.77.1.2\r\n', httpGet(trusted.port, '/health')],
        [Buffer.concat([V2_SIGNATURE, Buffer.from([0x31, 0x11, 0, 0])]), httpGet(trusted.port, '/health')],
      ];
      for (const parts of malformed) expect(await raw(trusted.port, ...parts)).toEqual({ statuses: [], text: '' });
      // No header at all: plain HTTP from a trusted proxy.
      expect(await raw(trusted.port, httpGet(trusted.port, '/health'))).toEqual({ statuses: [], text: '' });
      // Nothing sent: closed once the header's time is up.
      expect(await raw(trusted.port)).toEqual({ statuses: [], text: '' });
      expect(createContext).not.toHaveBeenCalled();
    } finally {
      createContext.mockRestore();
    }
    expect(await refusals('malformed')).toBe(before.malformed + 3);
    expect(await refusals('missing')).toBe(before.missing + 1);
    expect(await refusals('timeout')).toBe(before.timeout + 1);
  });

  it('closes, unanswered, a connection that sends a PROXY header from a peer not trusted, and serves its plain HTTP', async () => {
    const createContext = vi.spyOn(untrusted.app, 'createContext');
    try {
      for (const header of [proxyV1(inside()), proxyV2(inside())]) {
        expect(await raw(untrusted.port, header, signed(untrusted.port, `${entityPath}/`))).toEqual({ statuses: [], text: '' });
      }
      expect(createContext).not.toHaveBeenCalled();
      // Plain HTTP from it (a health check on the API's own machine) is served, from its own address.
      expect((await raw(untrusted.port, httpGet(untrusted.port, '/health'))).statuses).toEqual([200]);
      expect((await raw(untrusted.port, signed(untrusted.port, `${entityPath}/`, { 'x-forwarded-for': inside() }))).statuses).toEqual([
        401,
      ]);
    } finally {
      createContext.mockRestore();
    }
  });
});
