// Overlapping batches against the real stack (API, worker, Temporal,
// PostgreSQL): the change feed in commit order, no deadlock and no waiting on
// strangers, and overlap on the same entities behaving as one batch after the
// other would. A Gate holds a batch inside its open transaction (after a
// written group) so that the overlap is certain, not a matter of timing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeCommand, EntityRecord } from '../../domain/model.ts';
import { normalizeForSearch } from '../../domain/text.ts';
import { batchXml, create, namePart, update } from '../support/batches.ts';
import { FeedFollower } from '../support/feed-follower.ts';
import { Gate } from '../support/gate.ts';
import { eventually } from '../support/poll.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';

describe('overlapping batches', () => {
  const gate = new Gate();
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ afterWriteStep: (batchId) => gate.pass(batchId) });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const follower = () =>
    new FeedFollower(async (path) => {
      const response = await harness.api(`/api/v2${path}`, { as: 'read' });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${body}`);
      return body;
    });

  /** Submits a v2 batch; with `held`, its activity waits after its first written group until released. */
  async function submit(commands: ChangeCommand[], held = false): Promise<string> {
    const id = randomUUID();
    if (held) gate.hold(id);
    const response = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml(commands, { uuid: id }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toBe(id);
    return id;
  }

  /** The attempt of the batch's apply activity that completed, as Temporal's history records it. */
  /**
   * Resolves once a backend waits on a lock (wait_event_type 'Lock') held by a transaction left open while idle:
   * a batch that waits behind one held at its gate, which is what its test must see before it lets the first go on.
   */
  async function lockWaitBehindHeldBatch(): Promise<void> {
    await eventually(async () => {
      const waiters = await harness.sql(
        `select waiter.pid from pg_stat_activity waiter
          where waiter.datname = current_database() and waiter.wait_event_type = 'Lock'
            and exists (select 1 from pg_stat_activity holder
                         where holder.pid = any(pg_blocking_pids(waiter.pid)) and holder.state = 'idle in transaction')`,
      );
      return waiters.length > 0 ? true : undefined;
    });
  }

  async function appliedOnAttempt(batchId: string): Promise<number> {
    const handle = harness.temporal.workflow.getHandle(batchId);
    await handle.result();
    const history = await handle.fetchHistory();
    const started = (history.events ?? []).flatMap((event) =>
      event.activityTaskStartedEventAttributes ? [event.activityTaskStartedEventAttributes.attempt ?? 1] : [],
    );
    expect(started.length, `activity starts of ${batchId}`).toBeGreaterThan(0);
    return Math.max(...started);
  }

  async function statusOf(batchId: string): Promise<string | undefined> {
    return (await harness.db.batches.find(batchId))?.status;
  }

  async function records(entityType: string): Promise<EntityRecord[]> {
    const rows = await harness.sql<{ record: EntityRecord }>('select record from entity where entity_type = $1 order by id', [entityType]);
    return rows.map((row) => row.record);
  }

  const creates = (entityType: string, names: readonly string[]) => names.map((name, index) => create(`c${index}`, name, { entityType }));

  it('a follower sees a batch that commits after a later one began and committed (the feed is in commit order)', async () => {
    const entityType = `OVERLAP-FEED-${randomUUID()}`;
    const feed = follower();
    await feed.sync();

    const long = await submit(creates(entityType, ['Dlouhý První', 'Dlouhý Druhý', 'Dlouhý Třetí']), true);
    const releaseLong = await gate.reached(long);
    const short = await submit(creates(entityType, ['Krátký Jediný']));
    expect((await batchEnded(harness, short)).status).toBe('COMPLETED');
    expect(await statusOf(long)).toBe('PROCESSING');
    await feed.sync();

    releaseLong();
    expect((await batchEnded(harness, long)).status).toBe('COMPLETED');
    await feed.sync();

    const stored = await records(entityType);
    expect(stored).toHaveLength(4);
    for (const record of stored) expect(feed.seen.get(record.entityId), `entity ${record.entityId}`).toBe(record.revision.metadataRev);
  });

  it('two imports adding the same new name words in opposite order both complete on their first attempt', async () => {
    const entityType = `OVERLAP-WORDS-${randomUUID()}`;
    const words = Array.from({ length: 40 }, (_, index) => `Slovo${randomUUID().slice(0, 8)}x${index}`);
    // Four groups each (7,200 names in all: more than the lock table holds as advisory locks); batch A meets the words front to back, batch B back to front.
    const names = (order: readonly string[]) =>
      Array.from({ length: 3_600 }, (_, index) => `${order[Math.floor((index / 3_600) * order.length)]} ${index}`);
    const a = await submit(creates(entityType, names(words)), true);
    const b = await submit(creates(entityType, names([...words].reverse())), true);
    // Both hold their first group's words in their open transactions before either goes on.
    const [releaseA, releaseB] = await Promise.all([gate.reached(a), gate.reached(b)]);
    releaseA();
    releaseB();
    expect((await batchEnded(harness, a, 60_000)).status).toBe('COMPLETED');
    expect((await batchEnded(harness, b, 60_000)).status).toBe('COMPLETED');
    expect(await appliedOnAttempt(a)).toBe(1);
    expect(await appliedOnAttempt(b)).toBe(1);
    expect(await records(entityType)).toHaveLength(7_200);
    // Each entity's words carry its type and the fewest trigrams of its names holding them, as its names say.
    const differences = await harness.sql<{ n: string }>(
      `with kept as (
         select nw.word, nw.entity_id, nw.preferred, nw.entity_type, nw.trigrams
           from name_word nw join entity e on e.id = nw.entity_id where e.entity_type = $1
       ), expected as (
         select w as word, sv.entity_id, sv.preferred, e.entity_type, min(name_trigrams(sv.value_norm)) as trigrams
           from search_value sv join entity e on e.id = sv.entity_id, name_words(sv.value_norm) w
          where e.entity_type = $1 and sv.kind = 'name' group by 1, 2, 3, 4
       ) select count(*) as n from ((table kept except table expected) union all (table expected except table kept)) d`,
      [entityType],
    );
    expect(differences[0]!.n).toBe('0');
  });

  it('a one-entity batch sharing a new word with an open import does not wait for the import', async () => {
    const entityType = `OVERLAP-SHARE-${randomUUID()}`;
    const word = `Sdílené${randomUUID().slice(0, 8)}`;
    const long = await submit(creates(entityType, [`${word} Velký`, `${word} Veliký`]), true);
    const releaseLong = await gate.reached(long);
    try {
      const small = await submit([create('s', `${word} Malý`, { entityType })]);
      expect((await batchEnded(harness, small, 20_000)).status).toBe('COMPLETED');
      expect(await statusOf(long)).toBe('PROCESSING');
    } finally {
      releaseLong();
    }
    expect((await batchEnded(harness, long)).status).toBe('COMPLETED');
    // The word index holds the word once, for all three entities.
    const rows = await harness.sql<{ vocabulary: string; holders: string }>(
      `select (select count(*) from name_vocabulary where word = $1) as vocabulary, (select count(distinct entity_id) from name_word where word = $1) as holders`,
      [normalizeForSearch(word)],
    );
    expect(rows[0]).toEqual({ vocabulary: '1', holders: '3' });
  });

  it('batch A updating {X, Y} and batch B updating {Y, X} at once: no deadlock, both changes kept', async () => {
    const entityType = `OVERLAP-XY-${randomUUID()}`;
    const seed = await submit(creates(entityType, ['Xaver První', 'Ypsilon Druhý']));
    expect((await batchEnded(harness, seed)).status).toBe('COMPLETED');
    const [x, y] = await records(entityType);
    const participant = (name: string) => ({
      op: 'addParticipant' as const,
      participant: { role: 'EDITOR' as const, lastChange: new Date().toISOString(), user: { id: name, name } },
    });

    const a = await submit(
      [
        update('ax', x!.entityId, x!.revision.rev, [participant('editor-a')]),
        update('ay', y!.entityId, y!.revision.rev, [participant('editor-a')]),
      ],
      true,
    );
    const releaseA = await gate.reached(a);
    const b = await submit([
      update('by', y!.entityId, y!.revision.rev, [participant('editor-b')]),
      update('bx', x!.entityId, x!.revision.rev, [participant('editor-b')]),
    ]);
    // B waits for A's locks: it cannot finish while A holds them.
    await lockWaitBehindHeldBatch();
    expect(await statusOf(b)).toBe('PROCESSING');
    releaseA();
    expect((await batchEnded(harness, a)).status).toBe('COMPLETED');
    expect((await batchEnded(harness, b)).status).toBe('COMPLETED');
    expect(await appliedOnAttempt(a)).toBe(1);
    expect(await appliedOnAttempt(b)).toBe(1);

    for (const record of await records(entityType)) {
      expect(record.revision.participants.map((p) => p.user.id).sort()).toEqual(['editor-a', 'editor-b']);
      // B's revision follows A's: the history is one chain, as one batch after the other would write it.
      const rows = await harness.sql<{ batch_id: string; metadata_rev: string }>(
        'select batch_id, metadata_rev from revision where entity_id = $1 order by seq',
        [record.entityId],
      );
      expect(rows.map((row) => row.batch_id)).toEqual([seed, a, b]);
      expect(rows.at(-1)!.metadata_rev).toBe(record.revision.metadataRev);
    }
  });

  it('two concurrent creates of one preferred name: the second to commit is warned, as one after the other would be', async () => {
    const entityType = `OVERLAP-NAME-${randomUUID()}`;
    const name = `Jméno ${randomUUID().slice(0, 8)}`;
    const first = await submit([create('a', name, { entityType })], true);
    const releaseFirst = await gate.reached(first);
    const second = await submit([create('b', name, { entityType })]);
    // The second writes its record, reads the holders (the first is not committed) and commits.
    expect((await batchEnded(harness, second)).status).toBe('COMPLETED');
    releaseFirst();
    const outcome = await batchEnded(harness, first);
    expect(outcome.status).toBe('FAILED');
    expect(JSON.stringify(outcome.result)).toContain('PreferredNameExists');
    expect(await records(entityType)).toHaveLength(1);
  });

  it('one client-given entity UUID in two concurrent batches: one creates it, the other fails saying it is taken, on its first attempt', async () => {
    const entityType = `OVERLAP-UUID-${randomUUID()}`;
    const entityUuid = randomUUID();
    const first = await submit([create('a', 'Jednou Jediný', { entityType, entityUuid })], true);
    const releaseFirst = await gate.reached(first);
    const second = await submit([create('b', 'Podruhé Týž', { entityType, entityUuid, parts: [namePart('Podruhé Týž')] })]);
    await lockWaitBehindHeldBatch();
    expect(await statusOf(second)).toBe('PROCESSING');
    releaseFirst();
    expect((await batchEnded(harness, first)).status).toBe('COMPLETED');
    const outcome = await batchEnded(harness, second);
    expect(outcome.status).toBe('FAILED');
    expect(JSON.stringify(outcome.result)).toContain('DuplicateEntityUuid');
    expect(await appliedOnAttempt(second)).toBe(1);
    const stored = await records(entityType);
    expect(stored.map((record) => record.entityUuid)).toEqual([entityUuid]);
  });
});
