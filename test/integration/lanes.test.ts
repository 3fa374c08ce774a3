import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadActivity } from '../../api/upload-slots.ts';
import { loadConfig } from '../../config.ts';
import { inTransaction } from '../../db/sql.ts';
import { repairStrandedJobs } from '../../services/batches/recovery.ts';
import { storeBatch } from '../../db/batches.ts';
import { batchLane } from '../../services/batches/workflow.ts';
import { laneTaskQueue } from '../../temporal/names.ts';
import { activitySlots } from '../../worker/create-worker.ts';
import { batchXml, create, namePart } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { eventually } from '../support/poll.ts';

// Small work has its own lane: a small batch's activities run on
// a task queue of their own, with slots of their own in every worker, so a
// save is applied while an import holds every bulk slot. The lane is chosen
// from the batch's size when it is submitted.

const SMALL_CHANGES = 5;
const SMALL_BYTES = 64 * 1024;

/** Holds a batch's apply inside its open transaction (after its first written step) until released. */
class Hold {
  private readonly held = new Map<string, { reach: () => void; reached: Promise<void>; release: () => void; released: Promise<void> }>();

  hold(batchId: string): void {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.held.set(batchId, { reach, reached, release, released });
  }

  async step(batchId: string): Promise<void> {
    const entry = this.held.get(batchId);
    if (!entry) return;
    entry.reach();
    await entry.released;
  }

  reached(batchId: string): Promise<void> {
    return this.held.get(batchId)!.reached;
  }

  releaseAll(): void {
    for (const entry of this.held.values()) entry.release();
  }
}

describe('the interactive lane', () => {
  const entityType = `LANES-${randomUUID()}`;
  const hold = new Hold();
  let harness: Harness;

  beforeAll(async () => {
    // One bulk slot, so one held import fills it; small means at most 5 changes and 64 KiB here.
    harness = await startHarness({
      env: {
        WORKER_MAX_CONCURRENT_ACTIVITIES: '1',
        WORKER_INTERACTIVE_ACTIVITIES: '1',
        SMALL_BATCH_MAX_CHANGES: String(SMALL_CHANGES),
        SMALL_BATCH_MAX_BYTES: String(SMALL_BYTES),
        UPLOAD_MAX_CONCURRENT: '1',
      },
      afterWriteStep: (batchId) => hold.step(batchId),
    });
  });
  afterAll(async () => {
    hold.releaseAll();
    await harness?.close();
  });

  const namesOf = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, index) => create(`l${index}`, `${prefix} ${index}`, { entityType }));
  const statusOf = async (id: string) => (await harness.db.batches.find(id))?.status;

  async function submit(xml: string): Promise<string> {
    const response = await harness.api('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as string;
  }

  /** The task queues the batch's workflow scheduled its activities on. */
  async function activityQueues(batchId: string): Promise<string[]> {
    const history = await harness.temporal.workflow.getHandle(batchId).fetchHistory();
    return (history.events ?? []).flatMap((event) => event.activityTaskScheduledEventAttributes?.taskQueue?.name ?? []);
  }

  it('applies a one-entity batch while an import holds every bulk slot and another waits for one', async () => {
    const importId = randomUUID();
    hold.hold(importId);
    let queuedId: string;
    let saveId: string;
    try {
      await submit(batchXml(namesOf('Hromadný', 20), { uuid: importId }));
      await hold.reached(importId);
      // A second import queues behind the first: the bulk lane is full.
      queuedId = await submit(batchXml(namesOf('Čekající', 20)));

      saveId = await submit(batchXml([create('a', 'Jednotlivý Záznam', { entityType })]));
      const { status: saved } = await batchEnded(harness, saveId, 20_000);
      expect(saved).toBe('COMPLETED');
      // It finished while the import was still held mid-transaction and the other still waited for the slot.
      expect(await statusOf(importId)).toBe('PROCESSING');
      expect(await statusOf(queuedId)).toBe('ACCEPTED');
    } finally {
      hold.releaseAll();
    }
    for (const id of [importId, queuedId]) expect((await batchEnded(harness, id)).status, id).toBe('COMPLETED');
    expect(await activityQueues(saveId)).toEqual([laneTaskQueue(harness.config.TEMPORAL_TASK_QUEUE, 'interactive')]);
    expect(await activityQueues(importId)).toEqual([harness.config.TEMPORAL_TASK_QUEUE]);
  });

  it('chooses the lane from the changes and the body size known at submission, and shows it in the memo', async () => {
    const atLimit = await submit(batchXml(namesOf('Na Hranici', SMALL_CHANGES)));
    const overChanges = await submit(batchXml(namesOf('Přes Počet', SMALL_CHANGES + 1)));
    // One change, but a body over SMALL_BATCH_MAX_BYTES.
    const longNote = { kind: 'string' as const, type: 'NOTE', value: 'dlouhá poznámka '.repeat(SMALL_BYTES / 10) };
    const bigBody = batchXml([
      create('a', 'Dlouhý Záznam', {
        entityType,
        parts: [namePart('Dlouhý Záznam', { items: [{ kind: 'string', type: 'NM_MAIN', value: 'Dlouhý Záznam' }, longNote] })],
      }),
    ]);
    expect(Buffer.byteLength(bigBody)).toBeGreaterThan(SMALL_BYTES);
    const overBytes = await submit(bigBody);

    const expected = { [atLimit]: 'interactive', [overChanges]: 'bulk', [overBytes]: 'bulk' } as const;
    for (const [id, lane] of Object.entries(expected)) {
      expect((await batchEnded(harness, id)).status, id).toBe('COMPLETED');
      const described = await harness.temporal.workflow.getHandle(id).describe();
      expect(((await described.memo) as { lane: string }).lane, id).toBe(lane);
      expect(await activityQueues(id), id).toEqual([laneTaskQueue(harness.config.TEMPORAL_TASK_QUEUE, lane)]);
      // The workflow itself stays on the deployment's queue, where the UI and the operators find it.
      expect(described.taskQueue).toBe(harness.config.TEMPORAL_TASK_QUEUE);
    }
  });

  it('starts a stranded batch again in the lane of its size', async () => {
    const stranded = async (count: number) => {
      const id = randomUUID();
      const body = Buffer.from(batchXml(namesOf(`Opuštěný ${count}`, count), { uuid: id }));
      const pool = harness.db.pool;
      await inTransaction(pool, (client) =>
        storeBatch(client, {
          id,
          sha256: createHash('sha256').update(body).digest('hex'),
          apiVersion: 'v2',
          submittedBy: 'test-admin',
          force: false,
          changesTotal: count,
          body,
        }),
      );
      await pool.query(`update batch set submitted_at = now() - interval '2 minutes' where id = $1`, [id]);
      return id;
    };
    const small = await stranded(1);
    const large = await stranded(SMALL_CHANGES + 1);
    const { started } = await repairStrandedJobs(harness);
    expect(started).toEqual(expect.arrayContaining([small, large]));
    for (const id of [small, large]) expect((await batchEnded(harness, id)).status, id).toBe('COMPLETED');
    expect(await activityQueues(small)).toEqual([laneTaskQueue(harness.config.TEMPORAL_TASK_QUEUE, 'interactive')]);
    expect(await activityQueues(large)).toEqual([harness.config.TEMPORAL_TASK_QUEUE]);
  });

  it('reads a small upload while a large one holds the only upload slot', async () => {
    // A large upload that declares its length and sends only part of its body: it keeps the slot while it is read.
    const { hostname, port } = new URL(harness.baseUrl);
    const large = http.request({
      host: hostname,
      port: Number(port),
      method: 'POST',
      path: '/api/v2/batches',
      headers: {
        authorization: `Bearer ${TEST_TOKENS.admin}`,
        'content-type': 'application/xml',
        'content-length': String(SMALL_BYTES * 4),
      },
    });
    let largeAnswered = false;
    void once(large, 'response').then(
      () => (largeAnswered = true),
      () => undefined,
    );
    large.on('error', () => undefined);
    large.write('<?xml version="1.0" encoding="UTF-8"?>');
    try {
      // The large upload holds the only large slot before the save is sent.
      await eventually(async () => (uploadActivity(harness.db).large.inUse === 1 ? true : undefined));
      // Waiting for the large upload's slot, this would hang until the timeout.
      const saved = await harness.api('/api/v2/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('a', 'Rychlé Uložení', { entityType })]),
        signal: AbortSignal.timeout(15_000),
      });
      expect(saved.status, await saved.clone().text()).toBe(200);
      const saveId = (await saved.json()) as string;
      expect((await batchEnded(harness, saveId, 20_000)).status).toBe('COMPLETED');
      // Meanwhile the large one is still being read: it holds its slot and has had no answer.
      expect(uploadActivity(harness.db).large.inUse).toBe(1);
      expect(largeAnswered).toBe(false);
    } finally {
      large.destroy();
    }
  });

  it('tells small from large with both bounds', () => {
    const config = { SMALL_BATCH_MAX_CHANGES: 100, SMALL_BATCH_MAX_BYTES: 1024 };
    expect(batchLane(config, { changes: 100, bytes: 1024 })).toBe('interactive');
    expect(batchLane(config, { changes: 101, bytes: 10 })).toBe('bulk');
    expect(batchLane(config, { changes: 1, bytes: 1025 })).toBe('bulk');
    expect(batchLane({ ...config, SMALL_BATCH_MAX_BYTES: 0 }, { changes: 1, bytes: 500 })).toBe('bulk');
    // The documented defaults.
    const defaults = loadConfig({ FORCE_KEY_SECRET: 'a-test-secret-of-16+' });
    expect([defaults.SMALL_BATCH_MAX_CHANGES, defaults.SMALL_BATCH_MAX_BYTES, defaults.WORKER_INTERACTIVE_ACTIVITIES]).toEqual([
      10,
      1024 * 1024,
      2,
    ]);
  });

  it('gives a lane this process does not poll no slot, and the other lane the pool; WORKER_LANES names known lanes only', () => {
    expect(activitySlots(5, { bulk: 2, interactive: 2 })).toEqual({ bulk: 2, interactive: 2, export: 1 });
    expect(activitySlots(5, { bulk: 9, interactive: 9, export: 9 })).toEqual({ bulk: 1, interactive: 3, export: 1 });
    expect(activitySlots(5, { bulk: 9, interactive: 9 }, ['interactive'])).toEqual({ bulk: 0, interactive: 5, export: 0 });
    // The export lane goes with bulk.
    expect(activitySlots(5, { bulk: 9, interactive: 9 }, ['bulk'])).toEqual({ bulk: 4, interactive: 0, export: 1 });
    const secret = { FORCE_KEY_SECRET: 'a-test-secret-of-16+' };
    expect(loadConfig(secret).WORKER_LANES).toEqual(['bulk', 'interactive']);
    expect(loadConfig({ ...secret, WORKER_LANES: ' interactive ' }).WORKER_LANES).toEqual(['interactive']);
    expect(() => loadConfig({ ...secret, WORKER_LANES: 'fast' })).toThrow(/WORKER_LANES/);
  });
});
