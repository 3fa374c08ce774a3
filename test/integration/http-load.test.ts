import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoad } from '../../bench/lib/http-load.ts';

// The lean load generator of bench:reads judges the GET targets, so what it
// counts must be what the server answered: every response read whole by its
// Content-Length (also when it arrives in pieces), a non-2xx an error, each
// request carrying the headers made for its path.

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((done) => (server === undefined ? done() : server.close(() => done())));
  server = undefined;
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('bench lean load generator', () => {
  it('counts each answered request once, reads bodies sent in pieces, and sends the headers made for the path', async () => {
    const seen: string[] = [];
    const baseUrl = await serve((request, response) => {
      seen.push(`${request.url} ${request.headers['x-path']}`);
      const body = 'x'.repeat(100_000);
      response.writeHead(200, { 'content-length': String(body.length) });
      // Two writes: the client must wait for the whole body before the next request.
      response.write(body.slice(0, 50_000));
      setImmediate(() => response.end(body.slice(50_000)));
    });
    const result = await runLoad({ baseUrl, paths: ['/a', '/b'], connections: 3, seconds: 0.5, headers: (path) => [`x-path: ${path}`] });
    expect(result.errors).toBe(0);
    expect(result.requests).toBeGreaterThan(0);
    // Each connection may have one request sent as the time ran out and answered after it; none is counted twice.
    expect(seen.length).toBeGreaterThanOrEqual(result.requests);
    expect(seen.length).toBeLessThanOrEqual(result.requests + 3);
    for (const line of seen) expect(line).toMatch(/^(\/a \/a|\/b \/b)$/);
    expect(result.latencies.length).toBe(result.requests);
    expect([...result.latencies]).toEqual([...result.latencies].sort((a, b) => a - b));
  });

  it('sends the headers made anew for a request, never the bytes of an earlier one', async () => {
    const seen: string[] = [];
    const baseUrl = await serve((request, response) => {
      seen.push(String(request.headers['x-n']));
      response.writeHead(200, { 'content-length': '0' });
      response.end();
    });
    let made = 0;
    const result = await runLoad({ baseUrl, paths: ['/same'], connections: 1, seconds: 0.2, headers: () => [`x-n: ${made++}`] });
    expect(result.requests).toBeGreaterThan(1);
    // One lane: each request's headers were made just before it was sent, and none was sent twice.
    expect(seen).toEqual(seen.map((_, index) => String(index)));
  });

  it('counts answers other than 2xx as errors', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(404, { 'content-length': '2' });
      response.end('no');
    });
    const result = await runLoad({ baseUrl, paths: ['/missing'], connections: 2, seconds: 0.3, headers: () => [] });
    expect(result.requests).toBeGreaterThan(0);
    expect(result.errors).toBe(result.requests);
  });
});
