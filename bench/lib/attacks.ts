// The attacks of the abuse-latency benchmark, one per scenario of the abuse
// suite (test/abuse/*.test.ts), each made as that suite makes it but
// repeated until its phase ends, by a fixed number of workers that each send
// the next request as soon as the last is answered. Each attacker has a
// principal of its own (a token, the replayed key, or one source address),
// apart from the ordinary client's. Every request's outcome is counted
// ("429 TooManyRequests", "cut by the server", …); an abort ends each
// attack at once, whatever its requests are doing.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { serializeBatch } from '../../domain/xml/index.ts';
import { batchXml, create, update } from '../../test/support/batches.ts';
import { elzaHeaders, type TestKey } from '../../test/support/nda-signer.ts';
import { pollUntil } from '../../test/support/poll.ts';
import { BROAD_SEARCHES } from './broad-searches.ts';
import { generateCreates, writeGeneratedBatch } from './generate.ts';

const MIB = 2 ** 20;
/** Trickled uploads the writer holds open at once: twice UPLOADS_PER_PRINCIPAL's default. */
const STALLED_AT_ONCE = 16;
/** How often a trickled upload sends its next byte. */
const TRICKLE_EVERY_MS = 5000;

const xmlHeaders = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/xml' });

interface AttackRun {
  apiUrl: string;
  /** Aborted when the phase ends: every request of the attack is cut. */
  signal: AbortSignal;
  /** Counts one outcome of one of the attack's requests. */
  count(outcome: string): void;
}

export interface Attack {
  name: string;
  /** What the attacker does, for the report. */
  what: string;
  run(context: AttackRun): Promise<void>;
}

export const ATTACK_NAMES = [
  'trickled-uploads',
  'large-upload',
  'exports',
  'broad-searches',
  'bad-credentials',
  'root-tag',
  'v1-to-v2',
  'replayed-writes',
  'takeover',
  'metrics-scrapes',
  'slow-harvesters',
  'slow-harvesters-one-address',
] as const;
export type AttackName = (typeof ATTACK_NAMES)[number];

/** The token of the attacker of `name` (at least 32 characters, as tokens must be). */
const attackerToken = (name: AttackName) => `bench-attacker-${name}-${'0'.repeat(24)}`;
/** The attackers that use a token, and its permissions. */
const attackerPermissions: Record<string, string[]> = {
  'trickled-uploads': ['read', 'write'],
  'large-upload': ['read', 'write'],
  exports: ['read', 'export'],
  'broad-searches': ['read'],
  'root-tag': ['read', 'write'],
  'v1-to-v2': ['read', 'write'],
  takeover: ['read', 'write'],
};
const REPLAYED_KEY: TestKey = { keyId: 'bench-replayed', secret: 'bench-replayed-secret-0123456789abcdef0123' };
const ATTACKER_ADDRESS = '203.0.113.50';
/** Anonymous OAI-PMH harvesters reading slowly at once (the count the hardening was measured with). */
const SLOW_HARVESTERS = 24;
/** How long a slow harvester waits after each chunk of its answer it reads. */
const SLOW_READ_PAUSE_MS = 1000;
export const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef01234';

/** The AUTH_TOKENS entries of the attackers that use a token. */
export function attackerTokens(): { token: string; name: string; permissions: string[] }[] {
  return Object.entries(attackerPermissions).map(([name, permissions]) => ({
    token: attackerToken(name as AttackName),
    name: `attacker-${name}`,
    permissions,
  }));
}

/** The API_KEYS of the replayed-writes attacker: a single-writer key, so that another body under a seen signature is refused. */
export function attackerApiKeys(): unknown[] {
  return [{ name: 'attacker-replayed-writes', ...REPLAYED_KEY, permissions: ['read', 'write'], singleWriter: true }];
}

interface AttackSizes {
  /** The large upload's size in MB (about 612 generated entities a MB). */
  largeMb: number;
  /** The v1 body sent to v2, in MiB. */
  v1Mb: number;
}

/** What the attacks need made before their phases (files, a FAILED batch), and the attacks themselves, in `names`' order. */
export async function prepareAttacks(
  apiUrl: string,
  adminToken: string,
  names: readonly AttackName[],
  sizes: AttackSizes,
  scratch: string,
): Promise<Attack[]> {
  const attacks: Attack[] = [];
  for (const name of names) {
    const token = attackerToken(name);
    const auth = { authorization: `Bearer ${token}` };
    switch (name) {
      case 'trickled-uploads':
        attacks.push({
          name,
          what: `one writer keeps ${STALLED_AT_ONCE} chunked uploads open that send half a batch and then a byte every ${TRICKLE_EVERY_MS / 1000} s, opening another as each ends (100 ms after a refusal)`,
          run: (context) =>
            repeat(context, STALLED_AT_ONCE, async () => {
              const end = await stalledUpload(context, token);
              context.count(end);
              if (/^(429|503)/.test(end)) await pause(100, undefined, { signal: context.signal }).catch(() => undefined);
            }),
        });
        break;
      case 'large-upload': {
        const body = await acceptedLargeBatch(apiUrl, auth, sizes.largeMb, scratch);
        attacks.push({
          name,
          what: `another writer POSTs a valid ${(body.length / MIB).toFixed(0)} MiB batch again and again, one at a time (validated and stored whole, then refused as the same body)`,
          run: (context) => repeat(context, 1, () => send(context, '/api/v2/batches', { method: 'POST', headers: xmlHeaders(auth), body })),
        });
        break;
      }
      case 'exports':
        attacks.push({
          name,
          what: 'one reader starts exports of everything, 30 at a time, back to back',
          run: (context) =>
            repeat(context, 30, () =>
              send(context, '/api/v2/export/snapshots', {
                method: 'POST',
                headers: { ...auth, 'content-type': 'application/json' },
                body: '[]',
              }),
            ),
        });
        break;
      case 'broad-searches': {
        let next = 0;
        attacks.push({
          name,
          what: `one reader sends the ${BROAD_SEARCHES.length} broad and odd searches of bench/lib/broad-searches.ts, v2 then v1, 2 at a time`,
          run: (context) =>
            repeat(context, 2, () => {
              const n = next++;
              const search = BROAD_SEARCHES[n % BROAD_SEARCHES.length]!;
              const version = Math.floor(n / BROAD_SEARCHES.length) % 2 === 0 ? 'v2' : 'v1';
              return send(context, `/api/${version}/search?page=1&pageSize=20`, {
                method: 'POST',
                headers: { ...auth, 'content-type': 'application/json' },
                body: JSON.stringify(search.body(version)),
              });
            }),
        });
        break;
      }
      case 'bad-credentials': {
        let guess = 0;
        attacks.push({
          name,
          what: `one address (${ATTACKER_ADDRESS}, by X-Forwarded-For from a trusted proxy) sends unknown bearer tokens, 4 at a time`,
          run: (context) =>
            repeat(context, 4, () =>
              send(context, '/api/v2/entities/1', {
                headers: { authorization: `Bearer guess-${guess++}-${'0'.repeat(32)}`, 'x-forwarded-for': ATTACKER_ADDRESS },
              }),
            ),
        });
        break;
      }
      case 'root-tag': {
        const xml = batchXml([create('a', `Long root ${randomUUID()}`)]);
        const cut = xml.indexOf('<batchUpdate ') + '<batchUpdate '.length;
        const parts = [Buffer.from(`${xml.slice(0, cut)}note="${'x'.repeat(10 * MIB)}" `), Buffer.from(xml.slice(cut))];
        attacks.push({
          name,
          what: 'a writer sends batches whose root start tag is 10 MiB long, 2 at a time',
          run: (context) => repeat(context, 2, () => streamedPost(context, '/api/v2/batches', auth, parts)),
        });
        break;
      }
      case 'v1-to-v2': {
        const body = v1Batch(sizes.v1Mb * MIB);
        const parts = Array.from({ length: Math.ceil(body.length / MIB) }, (_, index) => body.subarray(index * MIB, (index + 1) * MIB));
        attacks.push({
          name,
          what: `a writer sends a ${(body.length / MIB).toFixed(0)} MiB v1 batch to /api/v2/batches, 2 at a time`,
          run: (context) => repeat(context, 2, () => streamedPost(context, '/api/v2/batches', auth, parts)),
        });
        break;
      }
      case 'replayed-writes': {
        let signed: { at: number; headers: Record<string, string> } | undefined;
        attacks.push({
          name,
          what: "one captured signed write of a single-writer key sent again with other bodies, 2 at a time (captured anew each minute, within the key's clock skew)",
          run: (context) =>
            repeat(context, 2, () => {
              if (!signed || performance.now() - signed.at > 60_000) {
                const path = '/api/v2/batches';
                signed = {
                  at: performance.now(),
                  headers: elzaHeaders(REPLAYED_KEY, { host: '127.0.0.1', method: 'POST', pathAndQuery: path }),
                };
              }
              return send(context, '/api/v2/batches', {
                method: 'POST',
                headers: xmlHeaders(signed.headers),
                body: batchXml([create('r', `Replayed ${randomUUID()}`)]),
              });
            }),
        });
        break;
      }
      case 'takeover': {
        const failed = await failedBatch(apiUrl, { authorization: `Bearer ${adminToken}` });
        attacks.push({
          name,
          what: "a writer sends another principal's FAILED batch's id with a body of its own, 2 at a time",
          run: (context) =>
            repeat(context, 2, () =>
              send(context, '/api/v2/batches', {
                method: 'POST',
                headers: xmlHeaders(auth),
                body: batchXml([create('mine', `Hijack ${randomUUID()}`)], { uuid: failed }),
              }),
            ),
        });
        break;
      }
      case 'slow-harvesters':
      case 'slow-harvesters-one-address': {
        const spread = name === 'slow-harvesters';
        attacks.push({
          name,
          what: `${SLOW_HARVESTERS} anonymous OAI-PMH harvesters (${spread ? `each from a loopback address of its own` : 'all from one address'}) ask for first pages of ListRecords and read each chunk ${SLOW_READ_PAUSE_MS} ms apart, again as each ends (100 ms after a refusal)`,
          run: (context) => {
            let worker = 0;
            return repeat(context, SLOW_HARVESTERS, () => {
              const from = spread ? `127.0.0.${10 + (worker++ % SLOW_HARVESTERS)}` : '127.0.0.1';
              return slowHarvest(context, from);
            });
          },
        });
        break;
      }
      case 'metrics-scrapes':
        attacks.push({
          name,
          what: 'a scraper reads /metrics with its token, 2 at a time, back to back',
          run: (context) => repeat(context, 2, () => send(context, '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })),
        });
        break;
    }
  }
  return attacks;
}

/** Runs `attempt` on `workers` workers, each again as soon as it ends, until the phase ends. */
async function repeat(context: AttackRun, workers: number, attempt: () => Promise<void>): Promise<void> {
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!context.signal.aborted) await attempt();
    }),
  );
}

/** An answer's outcome: its status, and for a refusal the problem's reason (or code). */
function outcomeOf(status: number, body: string): string {
  if (status >= 200 && status < 300) return String(status);
  try {
    const problem = JSON.parse(body) as { code?: string; properties?: { reason?: string } };
    const reason = problem.properties?.reason ?? problem.code;
    return reason ? `${status} ${reason}` : String(status);
  } catch {
    return String(status);
  }
}

const CUT_AT_THE_END = 'in flight when the phase ended';

/** One request of an attack, its outcome counted. */
async function send(context: AttackRun, path: string, init: RequestInit): Promise<void> {
  try {
    const response = await fetch(`${context.apiUrl}${path}`, { ...init, signal: context.signal });
    context.count(outcomeOf(response.status, await response.text()));
  } catch {
    if (context.signal.aborted) {
      context.count(CUT_AT_THE_END);
      return;
    }
    context.count('network error');
    await pause(100);
  }
}

/** A chunked POST of `parts`, written as the socket takes them; its outcome counted. */
function streamedPost(context: AttackRun, path: string, headers: Record<string, string>, parts: readonly Buffer[]): Promise<void> {
  return new Promise((resolve) => {
    let ended = false;
    const end = (outcome: string) => {
      if (ended) return;
      ended = true;
      context.count(context.signal.aborted && outcome === 'cut' ? CUT_AT_THE_END : outcome);
      resolve();
    };
    const req = request(new URL(path, context.apiUrl), {
      method: 'POST',
      headers: { ...xmlHeaders(headers), 'transfer-encoding': 'chunked' },
      signal: context.signal,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => (body += text));
      res.on('end', () => end(outcomeOf(res.statusCode ?? 0, body)));
      res.on('error', () => end(outcomeOf(res.statusCode ?? 0, body)));
    });
    // An answer before the body ends (a refusal) may reset the rest of the upload: the answer is the outcome.
    req.on('error', () => setTimeout(() => end('cut'), 100));
    void (async () => {
      try {
        for (const part of parts) if (!req.write(part)) await once(req, 'drain', { signal: context.signal });
        req.end();
      } catch {
        // The request failed or the phase ended: its 'error' says which.
      }
    })();
  });
}

/** A chunked upload that sends half a small batch and then a byte every TRICKLE_EVERY_MS: resolves its status, or how it ended without one. */
function stalledUpload(context: AttackRun, token: string): Promise<string> {
  const { hostname, port } = new URL(context.apiUrl);
  const xml = batchXml([create('a', `Stalled ${randomUUID()}`)]);
  const start = xml.slice(0, Math.floor(xml.length / 2));
  return new Promise((resolve) => {
    if (context.signal.aborted) return resolve(CUT_AT_THE_END);
    const socket = connect(Number(port), hostname);
    const abort = () => socket.destroy();
    context.signal.addEventListener('abort', abort, { once: true });
    socket.write(
      `POST /api/v2/batches HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/xml\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(start).toString(16)}\r\n${start}\r\n`,
    );
    const rest = Buffer.from(xml.slice(start.length));
    let next = 0;
    const trickle = setInterval(() => {
      if (next < rest.length && socket.writable)
        socket.write(Buffer.concat([Buffer.from('1\r\n'), rest.subarray(next, ++next), Buffer.from('\r\n')]));
    }, TRICKLE_EVERY_MS);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      // A refusal leaves the body unread and the connection open: the attacker hangs up and tries again.
      if (/^HTTP\/1\.1 \d{3}/.test(received)) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(trickle);
      context.signal.removeEventListener('abort', abort);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
      resolve(status ?? (context.signal.aborted ? CUT_AT_THE_END : 'cut by the server'));
    });
  });
}

/** One OAI-PMH first page asked from `localAddress` and read a chunk at a time, slowly; its outcome counted. */
function slowHarvest(context: AttackRun, localAddress: string): Promise<void> {
  return new Promise((resolve) => {
    let ended = false;
    const end = (outcome: string) => {
      if (ended) return;
      ended = true;
      context.count(context.signal.aborted && outcome === 'cut by the server' ? CUT_AT_THE_END : outcome);
      const wait = /^(429|503)/.test(outcome)
        ? pause(100, undefined, { signal: context.signal }).catch(() => undefined)
        : Promise.resolve();
      void wait.then(() => resolve());
    };
    const req = request(new URL('/oai?verb=ListRecords&metadataPrefix=cam-2025', context.apiUrl), {
      localAddress,
      agent: false,
      signal: context.signal,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        if (res.statusCode !== 200) body += text;
        res.pause();
        setTimeout(() => res.resume(), SLOW_READ_PAUSE_MS).unref();
      });
      res.on('end', () => end(res.statusCode === 200 ? '200 read slowly' : outcomeOf(res.statusCode ?? 0, body)));
      res.on('error', () => end('cut by the server'));
      res.on('aborted', () => end('cut by the server'));
    });
    req.on('error', () => end(context.signal.aborted ? CUT_AT_THE_END : 'cut by the server'));
    req.end();
  });
}

/** A v1 batch of generated creates, of about `bytes`. */
function v1Batch(bytes: number): Buffer {
  const serialize = (count: number) =>
    Buffer.from(
      serializeBatch(
        { version: 'v1', batchUuid: randomUUID(), sender: { id: 'bench', name: 'Benchmark' } },
        [...generateCreates(count, { seed: 77, localIdPrefix: 'v1e' })],
        'v1',
      ),
    );
  const perEntity = serialize(100).length / 100;
  return serialize(Math.max(1, Math.round(bytes / perEntity)));
}

/** The service's own state of a batch, read under `auth`. */
async function batchStatus(apiUrl: string, auth: Record<string, string>, id: string): Promise<string> {
  const response = await fetch(`${apiUrl}/api/v2/batches/${id}/detail`, { headers: auth });
  return ((await response.json()) as { status: string }).status;
}

/** Waits (at most `minutes`) until batch `id` is COMPLETED or FAILED; resolves which. */
function batchEnded(apiUrl: string, auth: Record<string, string>, id: string, minutes: number): Promise<string> {
  return pollUntil(
    async () => {
      const status = await batchStatus(apiUrl, auth, id);
      return status === 'COMPLETED' || status === 'FAILED' ? status : undefined;
    },
    { timeoutMs: minutes * 60_000, intervalMs: 250, what: `batch ${id} to end` },
  );
}

/** A generated batch of about `mb` MB, accepted and applied once: every later POST of it is validated and stored whole, then refused as the same body. */
async function acceptedLargeBatch(apiUrl: string, auth: Record<string, string>, mb: number, scratch: string): Promise<Buffer> {
  const file = join(scratch, 'large-upload.xml');
  await writeGeneratedBatch(file, Math.max(1, Math.round(mb * 612)), { batchUuid: randomUUID(), seed: 4242, localIdPrefix: 'large' });
  const body = readFileSync(file);
  const response = await fetch(`${apiUrl}/api/v2/batches`, { method: 'POST', headers: xmlHeaders(auth), body });
  const answer = await response.text();
  if (response.status !== 200) throw new Error(`the large upload's first POST answered ${response.status}: ${answer.slice(0, 300)}`);
  const ended = await batchEnded(apiUrl, auth, JSON.parse(answer) as string, 10);
  if (ended !== 'COMPLETED') throw new Error(`the large upload's first batch ended ${ended}`);
  return body;
}

/** A batch of the admin's that FAILED (an update of an entity that does not exist): the takeover's target. */
async function failedBatch(apiUrl: string, auth: Record<string, string>): Promise<string> {
  const uuid = randomUUID();
  const response = await fetch(`${apiUrl}/api/v2/batches`, {
    method: 'POST',
    headers: xmlHeaders(auth),
    body: batchXml([update('bad', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { uuid }),
  });
  if (response.status !== 200) throw new Error(`the takeover's target answered ${response.status}: ${await response.text()}`);
  const ended = await batchEnded(apiUrl, auth, uuid, 2);
  if (ended !== 'FAILED') throw new Error(`the takeover's target ended ${ended}, not FAILED`);
  return uuid;
}
