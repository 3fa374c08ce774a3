// The push stream GET /api/v2/stream against the real stack, followed by a
// real SSE client: Node's own EventSource (undici's, behind
// --experimental-eventsource; no EventSource package is installed), run in a
// child process. Each change arrives exactly once, in commit order, across
// the reconnections STREAM_MAX_SECONDS forces (the client resumes with
// Last-Event-ID), also from an API cluster of two processes whose streams
// stay open (so the commits reach them through each process's listener); a
// connection cut inside an event resumes with that event whole; a consumer
// that stops reading is cut by the server and resumes likewise.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/lib/ports.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

const TYPE = `ST_${randomUUID().slice(0, 8)}`;
const BIG = 1500;
/** Creates per commit while a consumer does not read: about 1 MB of events, a share of what the kernel buffers on loopback. */
const SLOW_BATCH = 5000;
const STREAM_ENV = {
  AUTH_DISABLED: 'true',
  STREAM_MAX_SECONDS: '2',
  STREAM_HEARTBEAT_SECONDS: '1',
  STREAM_BUFFER_BYTES: '16384',
  STREAM_SLOW_CONSUMER_SECONDS: '1',
};

/** The client: prints every event it dispatches, and every (re)connection, as a JSON line. */
const CLIENT = `
// EventSource's reconnection timer keeps no process alive on its own.
setInterval(() => undefined, 1 << 30);
const source = new EventSource(process.argv[1]);
source.onopen = () => console.log(JSON.stringify({ open: true }));
source.addEventListener('commit', (event) => console.log(JSON.stringify({ id: event.lastEventId, data: event.data })));
`;

interface Received {
  id: string;
  entities: number[];
}

class SseClient {
  readonly events: Received[] = [];
  opens = 0;
  readonly #child: ChildProcess;

  constructor(url: string) {
    this.#child = spawn(process.execPath, ['--experimental-eventsource', '--no-warnings', '--input-type=module', '-e', CLIENT, url], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let partial = '';
    this.#child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const message = JSON.parse(line) as { open?: true; id?: string; data?: string };
        if (message.open) this.opens += 1;
        else
          this.events.push({
            id: message.id!,
            entities: message
              .data!.split('\n')
              .map((json) => Number((JSON.parse(json) as { object: { id: string } }).object.id.split('/').pop())),
          });
      }
    });
  }

  async close(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = once(this.#child, 'exit');
    this.#child.kill('SIGKILL');
    await exited;
  }
}

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness({ env: STREAM_ENV });
});

afterAll(async () => {
  await harness?.close();
});

/** The latest committed transaction: where a stream starts from. */
async function latestTransaction(): Promise<string> {
  const [row] = await harness.sql<{ uuid: string }>(
    'select uuid from transaction where commit_seq is not null order by commit_seq desc limit 1',
  );
  return row!.uuid;
}

/** The transactions committed after `from` that changed records of this file's type, in commit order, with their records. */
async function committedAfter(from: string): Promise<Received[]> {
  const rows = await harness.sql<{ uuid: string; entities: string[] }>(
    `select t.uuid, array_agg(r.entity_id order by r.entity_id) as entities
       from transaction t join revision r on r.seq = t.seq join entity e on e.id = r.entity_id
      where e.entity_type = $2 and t.commit_seq > (select commit_seq from transaction where uuid = $1)
      group by t.uuid, t.commit_seq order by t.commit_seq`,
    [from, TYPE],
  );
  return rows.map((row) => ({ id: row.uuid, entities: row.entities.map(Number) }));
}

const mine = (ids: ReadonlySet<number>, events: Received[]) =>
  events
    .map((event) => ({ id: event.id, entities: event.entities.filter((id) => ids.has(id)) }))
    .filter((event) => event.entities.length > 0);

async function applyCreates(count: number): Promise<number[]> {
  const applied = await applyBatch(
    harness,
    batchXml(Array.from({ length: count }, (_, index) => create(`n${index}`, `Stream ${randomUUID()}`, { entityType: TYPE }))),
  );
  return [...applied.revisions.values()].map((revision) => revision.entityId).sort((a, b) => a - b);
}

describe('the push stream', () => {
  it('brings each change once, in commit order, to an EventSource that reconnects with Last-Event-ID', async () => {
    const from = await latestTransaction();
    const client = new SseClient(`${harness.baseUrl}/api/v2/stream?from=${from}`);
    try {
      await eventually(async () => (client.opens > 0 ? true : undefined), 30_000, 'the stream open');
      const entities = new Set<number>();
      for (const size of [1, 3, BIG, 2]) for (const id of await applyCreates(size)) entities.add(id);
      // The stream ends every STREAM_MAX_SECONDS: the client has resumed at least once meanwhile, or will.
      await eventually(async () => (client.opens >= 2 ? true : undefined), 30_000, 'a reconnection');
      const expected = await committedAfter(from);
      await eventually(
        async () =>
          mine(entities, client.events).reduce((sum, event) => sum + event.entities.length, 0) >= entities.size ? true : undefined,
        60_000,
        'every change at the client',
      );
      expect(mine(entities, client.events)).toEqual(expected);
      // An event is a whole transaction: the big one is one event though it is read in pieces.
      expect(expected.map((event) => event.entities.length)).toEqual([1, 3, BIG, 2]);
    } finally {
      await client.close();
    }
  });

  it('resumes a connection cut inside an event from the event before, and sends that event whole', async () => {
    const from = await latestTransaction();
    const small = await applyCreates(2);
    const big = await applyCreates(BIG);
    const response = await harness.api(`/api/v2/stream?from=${from}`);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    let text = '';
    // Read until the big event has begun (a data line of one of its records) but not ended.
    const bigIds = new Set(big.map(String));
    while (![...text.matchAll(/global\/(\d+)"/g)].some((match) => bigIds.has(match[1]!))) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended before the big event');
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const completeIds = [...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]!);
    expect(completeIds.length).toBeGreaterThan(0);
    const lastId = completeIds.at(-1)!;
    const [bigTransaction] = await committedAfter(lastId);
    expect(bigTransaction!.entities).toEqual(big);
    expect((await committedAfter(from))[0]!.entities).toEqual(small);

    const resumed = await harness.api('/api/v2/stream', { headers: { 'last-event-id': lastId } });
    const events = await readEvents(resumed, (read) => read.length >= 1);
    expect(events[0]).toEqual({ id: bigTransaction!.id, entities: big });
  });

  it(
    'cuts a consumer that stops reading, while events flow and at the end of its stream; it resumes and gets each change once',
    { timeout: 300_000 },
    async () => {
      // One stream per address: the slot the slow consumer holds is free again once the server has cut it.
      const slow = await startHarness({
        worker: false,
        env: { ...STREAM_ENV, STREAM_CONNECTIONS_PER_ADDRESS: '1', STREAM_MAX_SECONDS: '600' },
      });
      const from = await latestTransaction();
      const entities = new Set<number>();
      try {
        const consumer = await pausedConsumer(`${slow.baseUrl}/api/v2/stream?from=${from}`);
        // Commits land while it does not read, until the server cuts it (its unsent bytes above STREAM_BUFFER_BYTES for a second).
        await eventually(
          async () => {
            const probe = await slow.api('/api/v2/stream');
            await probe.body?.cancel();
            if (probe.status === 200) return true;
            expect(probe.status).toBe(429);
            for (const id of await applyCreates(SLOW_BATCH)) entities.add(id);
            return undefined;
          },
          180_000,
          'the slow consumer cut',
        );
        // What reached it before the cut; the event the cut broke has no id line and is not an event.
        const before = eventsOf(await readToEnd(consumer));
        expect(consumer.complete).toBe(false);
        const receivedBefore = mine(entities, before).reduce((sum, event) => sum + event.entities.length, 0);
        expect(receivedBefore).toBeLessThan(entities.size);

        const lastId = before.at(-1)?.id ?? from;
        // The probe's slot is released as its socket closes: a 429 meanwhile is retried.
        const resumed = await eventually(async () => {
          const response = await slow.api('/api/v2/stream', { headers: { 'last-event-id': lastId } });
          if (response.status !== 429) return response;
          await response.body?.cancel();
          return undefined;
        });
        expect(resumed.status).toBe(200);
        const after = await readEvents(
          resumed,
          (events) => mine(entities, events).reduce((sum, event) => sum + event.entities.length, 0) >= entities.size - receivedBefore,
        );
        expect(mine(entities, [...before, ...after])).toEqual(await committedAfter(from));
      } finally {
        await slow.close();
      }

      // The same backlog (more than the kernel took above) to a consumer that reads nothing, on a stream that
      // ends after two seconds and never counts its buffer as too full: its end cannot be sent, and it is cut.
      const ending = await startHarness({
        worker: false,
        env: {
          ...STREAM_ENV,
          STREAM_CONNECTIONS_PER_ADDRESS: '1',
          STREAM_MAX_SECONDS: '2',
          STREAM_BUFFER_BYTES: String(1024 * 1024 * 1024),
        },
      });
      try {
        const consumer = await pausedConsumer(`${ending.baseUrl}/api/v2/stream?from=${from}`);
        await eventually(
          async () => {
            const probe = await ending.api('/api/v2/stream');
            await probe.body?.cancel();
            if (probe.status === 200) return true;
            expect(probe.status).toBe(429);
            return undefined;
          },
          60_000,
          'the stream cut at its end',
        );
        await readToEnd(consumer);
        expect(consumer.complete).toBe(false);
      } finally {
        await ending.close();
      }
    },
  );

  it('refuses a Last-Event-ID that names no transaction, and a stream past the per-address cap', async () => {
    const unknown = await harness.api('/api/v2/stream', { headers: { 'last-event-id': randomUUID() } });
    expect(unknown.status).toBe(404);
    const capped = await startHarness({
      worker: false,
      env: { ...STREAM_ENV, STREAM_CONNECTIONS_PER_ADDRESS: '1', STREAM_MAX_SECONDS: '600' },
    });
    try {
      const first = await capped.api('/api/v2/stream');
      expect(first.status).toBe(200);
      const second = await capped.api('/api/v2/stream');
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBeTruthy();
      await first.body!.cancel();
    } finally {
      await capped.close();
    }
  });
});

describe('two API processes', () => {
  let primary: ChildProcess;
  const output: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    primary = spawn(process.execPath, [fileURLToPath(new URL('../../api/main.ts', import.meta.url))], {
      env: {
        ...process.env,
        ...STREAM_ENV,
        // Streams stay open: what they bring comes through each process's commit listener, not a reconnection.
        STREAM_MAX_SECONDS: '600',
        API_PROCESSES: '2',
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: harness.config.TEMPORAL_TASK_QUEUE,
        DATA_DIR: inject('scratchDir'),
        LOG_LEVEL: 'info',
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    primary.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    primary.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    await eventually(async () => {
      if (primary.exitCode !== null) throw new Error(`the API exited:\n${output.join('')}`);
      return output.join('').includes('"processes":2') ? true : undefined;
    }, 90_000);
    clusterUrl = `http://127.0.0.1:${port}`;
  });

  let clusterUrl = '';

  afterAll(async () => {
    if (primary && primary.exitCode === null) {
      const exited = once(primary, 'exit');
      primary.kill('SIGTERM');
      await exited;
    }
  });

  it('brings each change once to clients of either process, whichever process committed it', async () => {
    const from = await latestTransaction();
    // The primary hands connections to the processes in turn: two clients, two processes.
    const clients = [new SseClient(`${clusterUrl}/api/v2/stream?from=${from}`), new SseClient(`${clusterUrl}/api/v2/stream?from=${from}`)];
    try {
      await eventually(async () => (clients.every((client) => client.opens > 0) ? true : undefined), 30_000, 'both streams open');
      const entities = new Set<number>();
      for (const size of [2, 5, 1]) for (const id of await applyCreates(size)) entities.add(id);
      const expected = await committedAfter(from);
      for (const client of clients) {
        await eventually(
          async () =>
            mine(entities, client.events).reduce((sum, event) => sum + event.entities.length, 0) >= entities.size ? true : undefined,
          60_000,
          'every change at each client',
        );
        expect(mine(entities, client.events)).toEqual(expected);
        expect(client.opens).toBe(1);
      }
    } finally {
      for (const client of clients) await client.close();
    }
  });
});

/** A stream's response that is not read: once Node's small buffer is full its socket is not read, and the kernel's buffers fill. */
async function pausedConsumer(url: string): Promise<IncomingMessage> {
  const consumer = await new Promise<IncomingMessage>((resolve, reject) => httpGet(url, resolve).on('error', reject));
  expect(consumer.statusCode).toBe(200);
  consumer.pause();
  // A cut ends it with 'aborted' (its chunked body never finished), then 'close'.
  consumer.on('error', () => undefined);
  return consumer;
}

/** Everything a paused response still delivers, read until it closes. */
async function readToEnd(consumer: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  const closed = new Promise((resolve) => consumer.once('close', resolve));
  consumer.on('data', (chunk: Buffer) => chunks.push(chunk));
  consumer.resume();
  await closed;
  return Buffer.concat(chunks).toString();
}

/** The events of a response until `enough` says so (or it ends), parsed. */
async function readEvents(response: Response, enough: (events: Received[]) => boolean): Promise<Received[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let events: Received[] = [];
  while (!enough(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    events = eventsOf(text);
  }
  await reader.cancel();
  return events;
}

/** The whole events of a stream's text: blocks that end with their id line (the service writes it last). */
function eventsOf(text: string): Received[] {
  const events: Received[] = [];
  const blocks = text.split('\n\n');
  // The last block is unfinished (or empty).
  for (const block of blocks.slice(0, -1)) {
    const id = /^id: (.+)$/m.exec(block)?.[1];
    if (!id) continue;
    const entities = [...block.matchAll(/^data: (.*)$/gm)].map((match) =>
      Number((JSON.parse(match[1]!) as { object: { id: string } }).object.id.split('/').pop()),
    );
    events.push({ id, entities });
  }
  return events;
}
