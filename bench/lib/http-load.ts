// A lean HTTP/1.1 load generator for the GET benchmarks: keep-alive
// connections, one request in flight on each (as autocannon without
// pipelining), each response read by its Content-Length and nothing more.
//
// Why not autocannon alone: on this 2-core machine the load generator shares
// the cores with the API and PostgreSQL, and autocannon (a full HTTP parser,
// a request object rebuilt per request, histograms) cost about as much CPU
// per GET as the API's own route. pgbench, the baseline, is a C client that
// costs next to nothing; this client brings the GET's side closer to that
// (docs/performance.md reports both clients' rates and CPU per request).

import { connect, type Socket } from 'node:net';

export interface LoadRun {
  /** Origin of the server, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  /** Paths requested in turn over all connections. */
  paths: readonly string[];
  connections: number;
  seconds: number;
  /**
   * Header lines of one request (`name: value`, no CRLF), asked per request:
   * a signature may depend on the time. The bytes of a path's request are
   * built again only when this returns another array than the last time for
   * that path (the same bytes need not be encoded twice, as wrk sends them).
   */
  headers: (path: string) => readonly string[];
}

export interface LoadResult {
  requests: number;
  seconds: number;
  /** Latencies of the completed requests, in ms, sorted. */
  latencies: Float64Array;
  /** Responses other than 2xx, and connections that failed. */
  errors: number;
  /** CPU time (user + system) of this process per completed request, µs. */
  clientCpuMicros: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;

/** Runs `connections` keep-alive lanes for `seconds`; each request is sent once the previous answer on its lane is in. */
export async function runLoad(run: LoadRun): Promise<LoadResult> {
  const url = new URL(run.baseUrl);
  const port = Number(url.port || 80);
  const hostHeader = `host: ${url.host}`;
  const latencies: number[] = [];
  const requests = new Map<string, { headers: readonly string[]; bytes: Buffer }>();
  const requestOf = (path: string): Buffer => {
    const headers = run.headers(path);
    const known = requests.get(path);
    if (known?.headers === headers) return known.bytes;
    const bytes = Buffer.from([`GET ${path} HTTP/1.1`, hostHeader, ...headers, '', ''].join('\r\n'), 'latin1');
    requests.set(path, { headers, bytes });
    return bytes;
  };
  let next = 0;
  let errors = 0;
  let stopping = false;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();

  const lane = () =>
    new Promise<void>((done) => {
      const socket: Socket = connect({ host: url.hostname, port, noDelay: true });
      let pending: Buffer | undefined;
      let sentAt = 0n;
      const send = () => {
        if (stopping) {
          socket.end();
          return;
        }
        const request = requestOf(run.paths[next++ % run.paths.length]!);
        sentAt = process.hrtime.bigint();
        socket.write(request);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
        const headerEnd = pending.indexOf(HEADER_END);
        if (headerEnd < 0) return;
        const head = pending.toString('latin1', 0, headerEnd);
        const length = CONTENT_LENGTH.exec(head);
        if (length === null) {
          errors += 1;
          socket.destroy(new Error(`a response without Content-Length: ${head.split('\r\n', 1)[0]}`));
          return;
        }
        const total = headerEnd + HEADER_END.length + Number(length[1]);
        if (pending.length < total) return;
        if (pending.length > total) {
          errors += 1;
          socket.destroy(new Error('more bytes than one response: the server answered what was not asked'));
          return;
        }
        pending = undefined;
        const status = Number(head.slice(9, 12));
        if (status < 200 || status > 299) errors += 1;
        latencies.push(Number(process.hrtime.bigint() - sentAt) / 1e6);
        send();
      });
      socket.on('error', () => {
        errors += 1;
      });
      socket.on('close', () => done());
    });

  const timer = setTimeout(() => {
    stopping = true;
  }, run.seconds * 1000);
  await Promise.all(Array.from({ length: run.connections }, lane));
  clearTimeout(timer);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: sorted.length,
    seconds,
    latencies: sorted,
    errors,
    clientCpuMicros: (cpu.user + cpu.system) / Math.max(1, sorted.length),
  };
}
