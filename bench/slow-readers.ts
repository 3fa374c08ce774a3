// npm run bench:slow-readers [-- --entities 100000 --readers 30 --page-size 50000 --duration 60 --api-processes 2 --json FILE]
//
// Ordinary clients beside slow readers. --readers clients, each under a key
// of its own (as every archive's client has), page the change feed at
// --page-size from genesis through a small receive window (16 KiB read every
// 100 ms from a paused socket), asking the next page as soon as one ends
// (after Retry-After when refused). Beside them, four ordinary clients
// read records (GET /api/v2/entities/{id}) and search, one request after
// another, for --duration seconds. Reported: the ordinary requests' p50, p95
// and max (target: p95 ≤ 1 s) and their statuses (all 200 expected), and
// how the slow readers' requests ended (complete, refused with 429/503, cut).
// The database (er_bench_slow_readers) is loaded afresh and dropped after.

import { connect } from 'node:net';
import pg from 'pg';
import { GENESIS_TRANSACTION_ID } from '../migrations/Migration20261123000005Genesis.ts';
import { commandOptions, reportFigures } from './lib/cli.ts';
import { loadGeneratedEntities } from './lib/load.ts';
import type { Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, recreateDatabase, startStack } from './lib/stack.ts';

const options = commandOptions(
  { entities: '100000', readers: '30', 'page-size': '50000', duration: '60', 'api-processes': '2' },
  { optional: ['json'] as const },
);
const entities = Number(options.entities);
const readers = Number(options.readers);
const pageSize = Number(options['page-size']);
const durationMs = Number(options.duration) * 1000;
const apiProcesses = options['api-processes'];
const ORDINARY_CLIENTS = 4;

const readerToken = (index: number) => `bench-slow-reader-token-${String(index).padStart(8, '0')}`;

type End = 'complete' | 'refused' | 'cut';

/** One page read through a small receive window; resolves how it ended and the Retry-After of a refusal. */
function slowPage(apiUrl: string, path: string, token: string): Promise<{ end: End; retryAfter: number }> {
  const { hostname, port } = new URL(apiUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    socket.pause();
    let head = '';
    let tail = '';
    const tick = setInterval(() => {
      const chunk: Buffer | null = socket.read(16_384) ?? socket.read();
      if (!chunk) return;
      if (head.length < 512) head += chunk.toString('latin1', 0, Math.min(chunk.length, 512));
      tail = (tail + chunk.toString('latin1')).slice(-16);
    }, 100);
    const finish = (ended: boolean) => {
      clearInterval(tick);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      const retryAfter = Number(/\r\nretry-after: *(\d+)/i.exec(head)?.[1] ?? 1);
      if (status === 429 || status === 503) resolve({ end: 'refused', retryAfter });
      else resolve({ end: ended && tail.endsWith('\r\n0\r\n\r\n') ? 'complete' : 'cut', retryAfter: 0 });
    };
    socket.on('end', () => {
      for (let chunk = socket.read(); chunk; chunk = socket.read()) tail = (tail + chunk.toString('latin1')).slice(-16);
      finish(true);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(false));
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const name = 'er_bench_slow_readers';
const url = await recreateDatabase(name);
console.log(`loading ${entities} entities…`);
await loadGeneratedEntities(url, entities);
const tokens = [
  { token: BENCH_TOKEN, name: 'bench', permissions: ['admin'] },
  ...Array.from({ length: readers }, (_, index) => ({ token: readerToken(index), name: `slow-reader-${index}`, permissions: ['read'] })),
];
// The long-read limit as deployed (the stack turns it off for its one bench token).
const stack = await startStack(
  name,
  { API_PROCESSES: apiProcesses, AUTH_TOKENS: JSON.stringify(tokens), LONG_READS_PER_PRINCIPAL: '4' },
  { reuseDatabase: true },
);
async function measure(): Promise<Figure[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows: latest } = await client.query<{ uuid: string }>(
    'select uuid from transaction where commit_seq is not null order by commit_seq desc limit 1',
  );
  const { rows: ids } = await client.query<{ id: string }>('select id from entity order by random() limit 1000');
  await client.end();
  const to = latest[0]!.uuid;
  const pages = Math.max(1, Math.ceil(entities / pageSize));

  const ends: Record<End, number> = { complete: 0, refused: 0, cut: 0 };
  const deadline = Date.now() + durationMs;
  const slow = Array.from({ length: readers }, async (_, index) => {
    for (let page = 1 + (index % pages); Date.now() < deadline; page = (page % pages) + 1) {
      const { end, retryAfter } = await slowPage(
        stack.apiUrl,
        `/api/v2/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${to}&page=${page}&pageSize=${pageSize}`,
        readerToken(index),
      );
      ends[end] += 1;
      if (end === 'refused') await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    }
  });

  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
  // The readers take their connections first, as in the incident.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const ordinary = Array.from({ length: ORDINARY_CLIENTS }, async (_, client) => {
    for (let n = client; Date.now() < deadline; n += 1) {
      const started = performance.now();
      const response =
        n % 4 === 3
          ? await fetch(`${stack.apiUrl}/api/v2/search?page=1&pageSize=10`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ types: ['PERSON'] }),
              signal: AbortSignal.timeout(30_000),
            })
          : await fetch(`${stack.apiUrl}/api/v2/entities/${ids[n % ids.length]!.id}`, { headers, signal: AbortSignal.timeout(30_000) });
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  });
  await Promise.all(ordinary);
  await Promise.all(slow);

  latencies.sort((a, b) => a - b);
  return [
    {
      figure: `ordinary requests beside ${readers} slow readers (pages of ${pageSize}, ${entities} entities, ${apiProcesses} API processes)`,
      value: latencies.length,
      unit: 'requests',
      target: 'all 200',
      met: [...statuses.keys()].every((status) => status === 200),
      note: [...statuses].map(([status, count]) => `${count}× ${status}`).join(', '),
    },
    { figure: 'ordinary p50', value: percentile(latencies, 50), unit: 'ms', target: '-', met: true, info: true },
    { figure: 'ordinary p95', value: percentile(latencies, 95), unit: 'ms', target: '≤ 1000 ms', met: percentile(latencies, 95) <= 1000 },
    { figure: 'ordinary max', value: latencies.at(-1) ?? Number.NaN, unit: 'ms', target: '-', met: true, info: true },
    {
      figure: 'slow pages complete',
      value: ends.complete,
      unit: 'pages',
      target: '-',
      met: true,
      info: true,
      note: `refused ${ends.refused} (429/503 with Retry-After), cut ${ends.cut}`,
    },
  ];
}
try {
  await reportFigures(options.json, measure);
} finally {
  await stack.stop();
  await dropDatabase(url);
}
