// The change feed as Activity Streams (LD4 EMM 1.0) at /activity-stream
// against the real stack: a consumer follows it from the first page across
// commits that land while it reads, applies each activity once, and ends with
// every revision of its records in commit order; full pages never change
// (ETag, immutable); prev, next and last chain the same pages; every change
// type; the documents have the shape of the spec's own examples; access
// follows OAI_PMH; a second API process answers the same totalItems.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/lib/ports.ts';
import { applyBatch, type AppliedRevision } from '../support/apply.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { EntryProcesses } from '../support/entry-points.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { migratedScratchDatabase } from '../support/scratch-database.ts';

const PAGE_SIZE = 3;
const TYPE = `AS_${randomUUID().slice(0, 8)}`;
const SPEC_EXAMPLES = new URL('../fixtures/emm/', import.meta.url);

interface Link {
  id: string;
  type: string;
}
interface Activity {
  type: string;
  published: string;
  object: { id: string; type: string; updated: string };
  target?: { id: string; type: string };
}
interface Page {
  '@context': string[];
  id: string;
  type: string;
  partOf: Link;
  totalItems: number;
  prev?: Link;
  next?: Link;
  orderedItems: Activity[];
}

let harness: Harness;
const records = new Map<string, AppliedRevision>();

async function get<T>(url: string, init: RequestInit = {}): Promise<{ body: T; response: Response }> {
  const response = await harness.api(new URL(url, harness.baseUrl).pathname, { as: null, ...init });
  expect(response.status, url).toBe(200);
  return { body: (await response.json()) as T, response };
}

async function apply(commands: Parameters<typeof batchXml>[0]): Promise<void> {
  const applied = await applyBatch(harness, batchXml(commands));
  for (const [localId, revision] of applied.revisions) records.set(localId, revision);
}

const mine = (activity: Activity) => activity.object.type === TYPE;
const entityOf = (activity: Activity) => Number(activity.object.id.split('/').pop());

/** Follows the stream from its first page: takes each page's new items once, then `next` while there is one. */
class Consumer {
  readonly applied: Activity[] = [];
  /** Pages in the order followed; the last is the open one it waits on. */
  readonly pages: string[] = [];
  /** Full pages as first read: they must never change. */
  readonly closed = new Map<string, { body: Page; etag: string }>();
  #taken = 0;

  constructor(first: string) {
    this.pages.push(first);
  }

  async catchUp(): Promise<void> {
    for (;;) {
      const url = this.pages.at(-1)!;
      const { body, response } = await get<Page>(url);
      for (const activity of body.orderedItems.slice(this.#taken)) this.applied.push(activity);
      this.#taken = body.orderedItems.length;
      if (!body.next) {
        expect(response.headers.get('cache-control')).toMatch(/no-cache/);
        return;
      }
      expect(body.orderedItems).toHaveLength(PAGE_SIZE);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      this.closed.set(url, { body, etag: response.headers.get('etag')! });
      this.pages.push(body.next.id);
      this.#taken = 0;
    }
  }
}

let database: Awaited<ReturnType<typeof migratedScratchDatabase>> | undefined;

// The consumer follows the stream from its first page, three activities a page: on a database of its own, not the run's.
beforeAll(async () => {
  database = await migratedScratchDatabase('stream');
  harness = await startHarness({
    env: {
      DATABASE_URL: database.url,
      OAI_PMH: 'public',
      ACTIVITY_STREAM_PAGE_SIZE: String(PAGE_SIZE),
      ANONYMOUS_READ_RATE_LIMIT: '0',
    },
  });
  await apply([
    create('a', 'Anna', { entityType: TYPE }),
    create('b', 'Bedřich', { entityType: TYPE }),
    create('c', 'Cyril', { entityType: TYPE }),
    create('d', 'Dana', { entityType: TYPE }),
  ]);
});

afterAll(async () => {
  await harness?.close();
  await database?.drop();
});

describe('the activity stream', () => {
  it('is followed from the first page across commits, each activity once, in commit order, with every change type', async () => {
    const entry = (await get<{ first: Link }>('/activity-stream')).body;
    const consumer = new Consumer(entry.first.id);
    await consumer.catchUp();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => records.get(id)!);
    // Commits land between the consumer's reads: it picks them up where it stopped.
    await apply([
      update('a', a!.entityId, a!.rev, [
        {
          op: 'addParticipant',
          participant: { role: 'APPROVER', user: { id: 'u-2', name: 'Petr' }, lastChange: new Date().toISOString() },
        },
      ]),
    ]);
    await consumer.catchUp();
    await apply([
      update('b', b!.entityId, b!.rev, [{ op: 'setState', state: 'ERS_INVALID' }]),
      update('c', c!.entityId, c!.rev, [
        { op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'stored', ref: { entityId: d!.entityId } } },
      ]),
    ]);
    const bInvalid = (await harness.sql<{ rev: string }>('select rev from entity where id = $1', [b!.entityId]))[0]!.rev;
    await apply([update('b', b!.entityId, bInvalid, [{ op: 'setState', state: 'ERS_NEW' }])]);
    await apply([create('e', 'Emil', { entityType: TYPE }), create('f', 'Filip', { entityType: TYPE })]);
    await consumer.catchUp();

    // Each activity once, in (commit, record) order, every revision of the consumer's records among them.
    const positions = await harness.sql<{ entity_id: string; commit_seq: string }>(
      `select r.entity_id, t.commit_seq from revision r join transaction t on t.seq = r.seq join entity e on e.id = r.entity_id
        where e.entity_type = $1 order by t.commit_seq, r.entity_id`,
      [TYPE],
    );
    const seen = consumer.applied.filter(mine);
    expect(seen.map(entityOf)).toEqual(positions.map((row) => Number(row.entity_id)));
    const byRecord = (localId: string) =>
      seen.filter((activity) => entityOf(activity) === records.get(localId)!.entityId).map((activity) => activity.type);
    expect(byRecord('a')).toEqual(['Create', 'Update']);
    expect(byRecord('b')).toEqual(['Create', 'Delete', 'Add']);
    expect(byRecord('c')).toEqual(['Create', 'Deprecate']);
    expect(byRecord('e')).toEqual(['Create']);
    const deprecated = seen.find((activity) => activity.type === 'Deprecate')!;
    expect(deprecated.target?.id).toBe(`${harness.baseUrl}/global/${d!.entityId}`);
    expect(deprecated.object.id).toBe(`${harness.baseUrl}/global/${c!.entityId}`);
    // The whole feed, not only these records: what the consumer applied is a prefix of every activity in commit order.
    const everything = await harness.sql<{ entity_id: string }>(
      'select r.entity_id from revision r join transaction t on t.seq = r.seq where t.commit_seq is not null order by t.commit_seq, r.entity_id',
    );
    expect(consumer.applied.map(entityOf)).toEqual(everything.slice(0, consumer.applied.length).map((row) => Number(row.entity_id)));

    // published is the commit time, the OAI datestamp rule: whole seconds, UTC, never going back.
    const times = consumer.applied.map((activity) => activity.published);
    for (const time of times) expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect([...times].sort()).toEqual(times);
    const [commitTime] = await harness.sql<{ published: string }>(
      `select to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as published
         from revision r join transaction t on t.seq = r.seq where r.entity_id = $1 order by t.commit_seq limit 1`,
      [a!.entityId],
    );
    expect(seen[0]!.published).toBe(commitTime!.published);

    // Full pages are as first read, answer 304 to their ETag, and chain back by prev.
    for (const [url, first] of consumer.closed) {
      const again = await get<Page>(url);
      expect(again.body).toEqual(first.body);
      expect(again.response.headers.get('etag')).toBe(first.etag);
      const revalidated = await harness.api(new URL(url).pathname, { as: null, headers: { 'if-none-match': first.etag } });
      expect(revalidated.status).toBe(304);
    }
    for (let index = 1; index < consumer.pages.length; index += 1) {
      const { body } = await get<Page>(consumer.pages[index]!);
      expect(body.prev?.id).toBe(consumer.pages[index - 1]);
    }
    expect((await get<Page>(consumer.pages[0]!)).body.prev).toBeUndefined();

    // The entry point's last page is one of the chain's, and its count every activity.
    const before = await countActivities();
    const { body: latest } = await get<{ last: Link; totalItems: number }>('/activity-stream');
    const after = await countActivities();
    expect(latest.totalItems).toBeGreaterThanOrEqual(before);
    expect(latest.totalItems).toBeLessThanOrEqual(after);
    await consumer.catchUp();
    expect(consumer.pages).toContain(latest.last.id);
  });

  it('has the shape of the spec examples', async () => {
    const entryExample = JSON.parse(readFileSync(new URL('entry-point.json', SPEC_EXAMPLES), 'utf8')) as Record<string, unknown>;
    const pageExample = JSON.parse(readFileSync(new URL('change-set.json', SPEC_EXAMPLES), 'utf8')) as Record<string, unknown>;
    const { body: entry, response } = await get<Record<string, unknown>>('/activity-stream');
    expect(response.headers.get('content-type')).toBe('application/ld+json; profile="https://www.w3.org/ns/activitystreams"');
    // `url` (a full download) is a MAY the service leaves out.
    delete entryExample.url;
    expect(shapeOf(entry)).toEqual(shapeOf(entryExample));
    expect(entry['@context']).toEqual(entryExample['@context']);

    // A page in the middle of the chain: prev, next, partOf, items.
    const first = (await get<Page>((entry.first as Link).id)).body;
    const page = (await get<Page>(first.next!.id)).body;
    expect(shapeOf(page)).toEqual(shapeOf(pageExample));
    expect(page.partOf).toEqual({ type: 'OrderedCollection', id: `${harness.baseUrl}/activity-stream` });
    expect(page.totalItems).toBe(page.orderedItems.length);
    for (const activity of page.orderedItems) expect(['Create', 'Update', 'Deprecate', 'Delete', 'Add']).toContain(activity.type);

    const asActivityJson = await harness.api('/activity-stream', { as: null, headers: { accept: 'application/activity+json' } });
    expect(asActivityJson.headers.get('content-type')).toMatch(/^application\/activity\+json/);
    expect(await harness.api('/activity-stream/page/first', { as: null }).then((answer) => answer.status)).toBe(400);
  });
});

describe('two API processes', () => {
  const processes = new EntryProcesses();
  let otherUrl = '';

  // The other process: `api/main.ts` as production runs it, on this file's database.
  beforeAll(async () => {
    const env = {
      ...process.env,
      DATABASE_URL: database!.url,
      OAI_PMH: 'public',
      ACTIVITY_STREAM_PAGE_SIZE: String(PAGE_SIZE),
      ANONYMOUS_READ_RATE_LIMIT: '0',
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: harness.config.TEMPORAL_TASK_QUEUE,
      DATA_DIR: inject('scratchDir'),
      LOG_LEVEL: 'info',
      PORT: String(await freePort()),
    };
    await processes.healthyApi(env, [processes.start('api/main.ts', env)], harness.db);
    otherUrl = `http://127.0.0.1:${env.PORT}`;
  });

  afterAll(() => processes.killAll());

  const entryPoint = async (base: string) => {
    const response = await fetch(`${base}/activity-stream`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { totalItems: number; last: Link };
    return { totalItems: body.totalItems, last: new URL(body.last.id).pathname, etag: response.headers.get('etag') };
  };

  it('answers the same totalItems from either process, the count of every committed activity', async () => {
    // The other process's first answer, before and after commits, some of them at once.
    const before = await entryPoint(otherUrl);
    expect(before).toEqual(await entryPoint(harness.baseUrl));
    await Promise.all(
      [1, 2, 3].map((batch) =>
        apply(Array.from({ length: batch * 2 }, (_, index) => create(`p${batch}-${index}`, `Two ${randomUUID()}`, { entityType: TYPE }))),
      ),
    );
    const [here, there] = await Promise.all([entryPoint(harness.baseUrl), entryPoint(otherUrl)]);
    expect(there).toEqual(here);
    expect(here.totalItems).toBe(before.totalItems + 12);
    expect(here.totalItems).toBe(await countActivities());
    // The running total each commit records is its predecessor's plus its own revisions.
    const wrong = await harness.sql<{ uuid: string }>(
      `select t.uuid from transaction t
        where t.commit_seq is not null
          and t.revisions_through is distinct from (select count(*) from revision r join transaction x on x.seq = r.seq where x.commit_seq <= t.commit_seq)`,
    );
    expect(wrong).toEqual([]);
  });
});

describe('access follows OAI_PMH', () => {
  it('asks for a token when OAI_PMH=bearer and serves nothing when off', async () => {
    const closed = await startHarness({ worker: false, env: { OAI_PMH: 'bearer' } });
    try {
      expect((await closed.api('/activity-stream', { as: null })).status).toBe(401);
      expect((await closed.api('/activity-stream/page/0-0', { as: 'read' })).status).toBe(200);
      const page = await closed.api('/activity-stream/page/0-0', { as: 'read' });
      expect(page.headers.get('cache-control')).toMatch(/^private/);
    } finally {
      await closed.close();
    }
    const off = await startHarness({ worker: false, env: { OAI_PMH: 'off' } });
    try {
      expect((await off.api('/activity-stream', { as: 'read' })).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

async function countActivities(): Promise<number> {
  const [row] = await harness.sql<{ n: string }>(
    'select count(*) as n from revision r join transaction t on t.seq = r.seq where t.commit_seq is not null',
  );
  return Number(row!.n);
}

/** The keys of a document and the JSON type of each value, objects and the first item of arrays followed. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        // Recommended or optional in the spec, and in its examples only here and there.
        .filter(([key]) => key !== 'summary' && key !== 'target')
        .map(([key, inner]) => [key, key === '@context' ? 'context' : shapeOf(inner)])
        .sort(([x], [y]) => String(x).localeCompare(String(y))),
    );
  return typeof value;
}
