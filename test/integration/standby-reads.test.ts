// Reads on real streaming hot standbys (docs/decisions/0192): a primary of
// the test's own, one standby that follows it and one started later with
// recovery_min_apply_delay, and the real app and worker reading through
// DATABASE_READ_URLS. Skipped, with a warning, where PostgreSQL's server
// binaries are not installed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDatabase, migrate, openOrm } from '../../db/orm.ts';
import { STREAM_START } from '../../domain/activity-streams/position.ts';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { freePort } from '../../platform/ports.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { listedPointers } from '../support/feed-reference.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';
import { harvest } from '../support/oai.ts';
import { eventually } from '../support/poll.ts';
import { standbysUnavailable, startPrimary, startStandby, type Cluster } from '../support/standby.ts';

const unavailable = standbysUnavailable();
if (unavailable) console.warn(`standby-reads.test.ts SKIPPED: ${unavailable}`);

const DATABASE = 'entity_records';
const READ_CONNECTIONS = 'entity-records-standby-read';
const PAGE_SIZE = 7;

describe.skipIf(unavailable !== undefined)('reads on PostgreSQL hot standbys', { timeout: 180_000 }, () => {
  let primary: Cluster;
  let live: Cluster;
  let delayed: Cluster | undefined;
  let delayedPort: number;
  let harness: Harness;
  const entityType = `SB-${randomUUID().slice(0, 8)}`;
  /** Every record created, by entity id: the test's primary holds nothing else. */
  const created = new Map<number, string>();
  let lastTransaction = GENESIS_TRANSACTION_ID;

  beforeAll(async () => {
    primary = await startPrimary();
    const url = primary.url(DATABASE);
    await ensureDatabase(url);
    const orm = await openOrm(url);
    await migrate(orm);
    await orm.close();
    live = await startStandby(primary);
    // Given to the app now, started later: until it answers it is out of the rotation.
    delayedPort = await freePort();
    harness = await startHarness({
      env: {
        DATABASE_URL: url,
        DATABASE_READ_URLS: `${live.url(DATABASE)},postgres://postgres@127.0.0.1:${delayedPort}/${DATABASE}`,
        // Far enough that the delayed standby stays in the rotation: reads that name newer data must skip it by themselves.
        REPLICA_MAX_LAG: '3600',
        OAI_PMH: 'public',
        OAI_PAGE_SIZE: String(PAGE_SIZE),
      },
    });
  }, 180_000);

  afterAll(async () => {
    await harness?.close();
    await delayed?.remove();
    await live?.remove();
    await primary?.remove();
  });

  const liveView = () => harness.db.reads.standbys()[0]!;
  const delayedView = () => harness.db.reads.standbys()[1]!;

  async function createRecords(count: number): Promise<string> {
    const applied = await applyBatch(
      harness,
      batchXml(Array.from({ length: count }, (_, index) => create(`r${index}`, `Standby ${randomUUID()}`, { entityType }))),
    );
    for (const revision of applied.revisions.values()) created.set(revision.entityId, revision.entityUuid);
    lastTransaction = applied.transaction;
    return applied.transaction;
  }

  async function replayedOn(standby: Cluster, transaction: string): Promise<true | undefined> {
    const rows = await standby.sql(DATABASE, 'select 1 from transaction where uuid = $1 and commit_seq is not null', [transaction]);
    return rows.length === 1 ? true : undefined;
  }

  /** The walk of the v2 feed (from, to], page by page; `between` runs after each page. */
  async function walk(from: string, to: string, between: (page: number) => Promise<void> = async () => undefined): Promise<number[]> {
    const ids: number[] = [];
    for (let page = 1; ; page += 1) {
      const response = await harness.api(`/api/v2/updates?fromTransId=${from}&toTransId=${to}&page=${page}&pageSize=${PAGE_SIZE}`);
      const text = await response.text();
      expect(response.status, text).toBe(200);
      const listed = listedPointers(text).map((pointer) => pointer.entityId);
      ids.push(...listed);
      if (listed.length < PAGE_SIZE) return ids;
      await between(page);
    }
  }

  async function readConnections(cluster: Cluster): Promise<number> {
    const [row] = await cluster.sql<{ n: number }>(
      DATABASE,
      'select count(*)::int as n from pg_stat_activity where application_name = $1 and datname = $2',
      [READ_CONNECTIONS, DATABASE],
    );
    return row!.n;
  }

  it('walks the feed and harvests OAI on the standby, every record once, while batches commit', async () => {
    for (let batch = 0; batch < 3; batch++) await createRecords(10);
    const to = lastTransaction;
    const expected = [...created.keys()].sort((a, b) => a - b);
    await eventually(() => replayedOn(live, to), 30_000, 'the standby replaying the last batch');
    expect(await readConnections(live)).toBe(0);

    const servedBefore = liveView().served;
    const ids = await walk(GENESIS_TRANSACTION_ID, to, () => createRecords(2).then(() => undefined));
    expect([...ids].sort((a, b) => a - b)).toEqual(expected);
    expect(liveView().served - servedBefore).toBeGreaterThanOrEqual(Math.ceil(expected.length / PAGE_SIZE));
    expect(await readConnections(live)).toBeGreaterThan(0);
    expect(await readConnections(primary)).toBe(0);

    // The harvest is pinned to the commit point of its first page: what was committed by then, once each.
    await eventually(() => replayedOn(live, lastTransaction), 30_000, 'the standby replaying the walk’s batches');
    const before = new Set(created.values());
    const servedBeforeHarvest = liveView().served;
    const harvested = await harvest(harness.baseUrl, `verb=ListIdentifiers&metadataPrefix=oai_dc&set=type:${entityType}`, {}, () =>
      createRecords(3).then(() => undefined),
    );
    const uuids = harvested.items.map((item) => item.identifier.split(':').at(-1)!);
    expect(new Set(uuids).size).toBe(uuids.length);
    expect(new Set(uuids)).toEqual(before);
    expect(harvested.pages).toBeGreaterThan(2);
    // Every page after the first is pinned to a point the standby has: served there.
    expect(liveView().served - servedBeforeHarvest).toBeGreaterThanOrEqual(harvested.pages - 1);
    expect(await readConnections(primary)).toBe(0);
  });

  it('reads the same rows on the standby as on the primary', async () => {
    await eventually(() => replayedOn(live, lastTransaction), 30_000, 'the standby replaying every batch');
    const onStandby = await harness.db.reads.side({ transactions: [lastTransaction] });
    expect(onStandby.on).toBe(liveView().name);
    const [entityId, entityUuid] = [...created].at(-1)!;
    const reads = (side: Pick<typeof onStandby, 'records' | 'oai' | 'activityStream'>) =>
      Promise.all([
        side.records.current({ entityId }),
        side.records.currentDocument({ entityId }),
        side.records.revisions({ entityId }, { offset: 0, limit: 10 }),
        side.oai.currentRecord(entityUuid, 'record'),
        side.activityStream.activitiesAfter(STREAM_START, 50),
      ]);
    const [standbyRows, primaryRows] = [await reads(onStandby), await reads(harness.db)];
    expect(standbyRows[0]).toBeDefined();
    expect(standbyRows).toEqual(primaryRows);
  });

  it('answers a batch’s submitter with its own write at once, while the standby has not replayed it', async () => {
    await live.sql(DATABASE, 'select pg_wal_replay_pause()');
    try {
      const transaction = await createRecords(1);
      const [entityId] = [...created.keys()].slice(-1);
      expect(await replayedOn(live, transaction)).toBeUndefined();
      // The submitter (admin) read its batch's result: its reads go where the batch is.
      const own = await harness.api(`/api/v2/entities/${entityId}`);
      expect(own.status, await own.text()).toBe(200);
      // Another client is served by the standby within REPLICA_MAX_LAG, which has not replayed the batch yet.
      const other = await harness.api(`/api/v2/entities/${entityId}`, { as: 'read' });
      expect(other.status).toBe(404);

      // A v1 save is answered once applied: the saver reads it too.
      const saved = await harness.api('/api/v1/batches', {
        method: 'POST',
        headers: { 'content-type': 'text/xml' },
        body: batchXml([create('a', `Saved ${randomUUID()}`, { entityType })], { version: 'v1' }),
        as: 'write',
      });
      const bus = await saved.text();
      expect(saved.status, bus).toBe(200);
      const savedId = /\beid="(\d+)"/.exec(bus)![1]!;
      const read = await harness.api(`/api/v1/entities/${savedId}`, { as: 'write' });
      expect(read.status, await read.text()).toBe(200);
      created.set(Number(savedId), /\beuid="([^"]+)"/.exec(bus)![1]!);
      lastTransaction = /\btrns="([^"]+)"/.exec(bus)![1]!;
    } finally {
      await live.sql(DATABASE, 'select pg_wal_replay_resume()');
    }
  });

  it('finishes a walk without an error when its standby stops mid-walk, and takes the standby back once it answers', async () => {
    const to = lastTransaction;
    await eventually(() => replayedOn(live, to), 30_000, 'the standby replaying everything');
    await eventually(async () => liveView().inRotation || undefined, 30_000, 'the standby in the rotation');
    const expected = [...created.keys()].sort((a, b) => a - b);
    const ids = await walk(GENESIS_TRANSACTION_ID, to, async (page) => {
      if (page === 2) await live.stop('immediate');
    });
    expect([...ids].sort((a, b) => a - b)).toEqual(expected);
    expect(liveView().inRotation).toBe(false);
    const scraped = await (await harness.api('/metrics', { as: null, headers: metricsAuthorization(harness.config) })).text();
    expect(scraped).toContain(`read_standby_in_rotation{standby="${liveView().name}"} 0`);

    await live.start();
    await eventually(async () => liveView().inRotation || undefined, 30_000, 'the standby back in the rotation');
  });

  it('skips a standby delayed by recovery_min_apply_delay for reads that need newer data, and uses it for the rest', async () => {
    await live.stop('fast');
    await eventually(async () => (liveView().inRotation ? undefined : true), 30_000, 'the live standby out of the rotation');
    const old = lastTransaction;
    delayed = await startStandby(primary, { applyDelay: '1h', port: delayedPort });
    await eventually(async () => delayedView().inRotation || undefined, 30_000, 'the delayed standby in the rotation');
    const oldIds = [...created.keys()].sort((a, b) => a - b);
    const newer = await createRecords(4);
    expect(await replayedOn(delayed, newer)).toBeUndefined();

    // Up to a transaction it has: served by the delayed standby.
    const servedBefore = delayedView().served;
    expect((await walk(GENESIS_TRANSACTION_ID, old)).sort((a, b) => a - b)).toEqual(oldIds);
    expect(delayedView().served).toBeGreaterThan(servedBefore);

    // Up to a transaction it has not replayed: the primary, with every record.
    const servedThen = delayedView().served;
    expect((await walk(GENESIS_TRANSACTION_ID, newer)).sort((a, b) => a - b)).toEqual([...created.keys()].sort((a, b) => a - b));
    expect(delayedView().served).toBe(servedThen);
  });
});
