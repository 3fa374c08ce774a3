// Batches of random sizes, creating records and adding metadata to shared
// ones, run by two workers while a client follows the change feed every
// 100 ms as the real client does. However they overlap, in the end the
// follower has seen every record at its current revision. The seed is printed;
// FEED_SEED=<n> replays a run.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeCommand, EntityRecord } from '../../domain/model.ts';
import { seededRandom } from '../../bench/lib/generate.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { FeedFollower } from '../support/feed-follower.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { every } from '../support/poll.ts';

describe('overlapping batches on two workers, followed through the change feed', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ workers: 2 });
  });
  afterAll(async () => {
    await harness?.close();
  });

  async function records(entityType: string): Promise<EntityRecord[]> {
    const rows = await harness.sql<{ record: EntityRecord }>('select record from entity where entity_type = $1 order by id', [entityType]);
    return rows.map((row) => row.record);
  }

  async function submit(commands: ChangeCommand[]): Promise<string> {
    const response = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml(commands),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as string;
  }

  it('sees every record at its current revision, whatever the batches overlap', { timeout: 180_000 }, async () => {
    const seed = Number(process.env.FEED_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`overlap-random: FEED_SEED=${seed}`);
    const random = seededRandom(seed);
    const entityType = `OVERLAP-RANDOM-${randomUUID()}`;

    // Records every batch may add metadata to: revisions of one record from overlapping batches.
    const shared = await submit(Array.from({ length: 20 }, (_, index) => create(`s${index}`, `Sdílený ${index}`, { entityType })));
    expect((await batchEnded(harness, shared)).status).toBe('COMPLETED');
    const sharedRecords = await records(entityType);

    const feed = new FeedFollower(async (path) => {
      const response = await harness.api(`/api/v2${path}`, { as: 'read' });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${body}`);
      return body;
    });
    const following = every(100, () => feed.sync());

    const batches: string[] = [];
    for (let batch = 0; batch < 10; batch += 1) {
      const size = random() < 0.3 ? 1 + Math.floor(random() * 3) : 1 + Math.floor(random() * 2_500);
      const commands: ChangeCommand[] = Array.from({ length: size }, (_, index) =>
        create(`c${index}`, `Náhodný ${batch} ${index} ${Math.floor(random() * 1e6)}`, { entityType }),
      );
      for (const record of sharedRecords) {
        if (random() < 0.3) {
          const participant = {
            role: 'EDITOR' as const,
            lastChange: new Date().toISOString(),
            user: { id: `editor-${batch}`, name: `Editor ${batch}` },
          };
          commands.push(update(`u${record.entityId}`, record.entityId, record.revision.rev, [{ op: 'addParticipant', participant }]));
        }
      }
      batches.push(await submit(commands));
      await new Promise((resolve) => setTimeout(resolve, random() * 400));
    }
    for (const batchId of batches) {
      expect((await batchEnded(harness, batchId, 150_000)).status, `batch ${batchId}`).toBe('COMPLETED');
    }
    await following.stop();
    await feed.sync();

    const stored = await records(entityType);
    const missed = stored.filter((record) => feed.seen.get(record.entityId) !== record.revision.metadataRev);
    expect(feed.syncs).toBeGreaterThan(10);
    expect(
      missed.map((record) => record.entityId),
      `FEED_SEED=${seed}: records not seen at their current revision`,
    ).toEqual([]);
  });
});
