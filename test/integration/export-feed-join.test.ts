// A snapshot export says where the feed continues: its upToTransId is the last
// committed transaction its records include, read in the same database
// snapshot. A consumer who loads the file and follows /updates/from/{it}
// misses nothing and applies nothing twice, though batches committed while
// the export was being written.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, namePart, update } from '../support/batches.ts';
import { elementText, listedPointers, referencePage } from '../support/feed-reference.ts';
import { Gate } from '../support/gate.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';
import { migratedScratchDatabase } from '../support/scratch-database.ts';

interface ExportDetail {
  status: string;
  upToTransId: string | null;
  fromTransId: string | null;
}

describe('a snapshot joined to the feed', () => {
  let harness: Harness;
  let database: Awaited<ReturnType<typeof migratedScratchDatabase>> | undefined;
  const gate = new Gate();
  const entityType = `JOIN-${randomUUID().slice(0, 8)}`;

  // A snapshot holds the whole registry, two records a step here: on a database of its own, not the run's.
  beforeAll(async () => {
    database = await migratedScratchDatabase('join');
    harness = await startHarness({
      env: { DATABASE_URL: database.url },
      exportRecordsPerStep: 2,
      afterExportStep: (id) => gate.passExport(id),
    });
  });

  afterAll(async () => {
    await harness?.close();
    await database?.drop();
  });

  async function startExport(kind: 'snapshots' | 'revisions', query = ''): Promise<string> {
    const response = await harness.api(`/api/v2/export/${kind}${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[]',
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return text;
  }

  async function finished(id: string): Promise<ExportDetail> {
    return eventually(async () => {
      const detail = (await (await harness.api(`/api/v2/export/${id}/detail`)).json()) as ExportDetail;
      return detail.status === 'COMPLETED' || detail.status === 'FAILED' ? detail : undefined;
    }, 60_000);
  }

  /** entityId → the rev of each record in a snapshot file. */
  function snapshotRevs(xml: string): Map<number, string> {
    const revs = new Map<number, string>();
    for (const element of xml.split(/<entity(?=[\s>])/).slice(1)) {
      const entityId = /\bentityId="(\d+)"/.exec(element)?.[1] ?? /<entityId>(\d+)<\/entityId>/.exec(element)?.[1];
      const rev = /<rev>([^<]+)<\/rev>/.exec(element)?.[1];
      if (!entityId || !rev) throw new Error(`no entityId or rev in ${element.slice(0, 400)}`);
      revs.set(Number(entityId), rev);
    }
    return revs;
  }

  it('loads a snapshot written while batches committed, then follows the feed from its upToTransId: every record at its current revision, none applied twice', async () => {
    const before = await applyBatch(harness, batchXml(Array.from({ length: 6 }, (_, n) => create(`s${n}`, `Snímek ${n}`, { entityType }))));
    gate.holdNextExport();
    const exportId = await startExport('snapshots');
    const release = await gate.reached(exportId);

    // While the export is being written: updates of records it holds, and new records.
    const revisions = [...before.revisions.values()];
    const during = await applyBatch(
      harness,
      batchXml([
        ...[0, 4].map((n) =>
          update(`u${n}`, revisions[n]!.entityId, revisions[n]!.rev, [{ op: 'newPart', part: namePart(`Jiné jméno ${n}`) }]),
        ),
        ...Array.from({ length: 2 }, (_, n) => create(`d${n}`, `Během ${n}`, { entityType })),
      ]),
    );
    release();

    const detail = await finished(exportId);
    expect(detail.status).toBe('COMPLETED');
    // The export's snapshot was taken before the batch committed.
    expect(detail.upToTransId).toBe(before.transaction);
    const download = await harness.api(`/api/v2/export/download/${exportId}`);
    expect(download.headers.get('x-up-to-trans-id')).toBe(detail.upToTransId);
    const loaded = snapshotRevs(await download.text());
    expect(loaded.get(revisions[0]!.entityId)).toBe(revisions[0]!.rev);

    // The consumer follows the feed from where the snapshot ends.
    const follow = await (await harness.api(`/api/v2/updates/from/${detail.upToTransId}`)).text();
    const changes = listedPointers(follow);
    expect(changes.map((change) => change.entityId).sort((a, b) => a - b)).toEqual(
      [...during.revisions.values()].map((revision) => revision.entityId).sort((a, b) => a - b),
    );
    for (const change of changes) {
      // Nothing applied twice: the feed brings only revisions the snapshot does not hold.
      expect(loaded.get(change.entityId)).not.toBe(change.rev);
      loaded.set(change.entityId, change.rev);
    }
    // Nothing missed: the consumer now holds every record at its current revision.
    const current = await referencePage(harness, GENESIS_TRANSACTION_ID, elementText(follow, 'to'), 1, 1_000_000);
    expect(new Map(current.map((pointer) => [pointer.entityId, pointer.rev]))).toEqual(loaded);
  });

  it('records the upper end of a revisions export, read in the same snapshot as its revisions', async () => {
    const first = await applyBatch(harness, batchXml([create('r0', 'Revize', { entityType })]));
    gate.holdNextExport();
    const exportId = await startExport('revisions', `?fromTransId=${GENESIS_TRANSACTION_ID}`);
    const release = await gate.reached(exportId);
    const later = await applyBatch(harness, batchXml([create('r1', 'Pozdější', { entityType })]));
    release();
    const detail = await finished(exportId);
    expect(detail.status).toBe('COMPLETED');
    expect(detail.upToTransId).toBe(first.transaction);
    const file = await (await harness.api(`/api/v2/export/download/${exportId}`)).text();
    expect(file).toContain(first.batchId);
    expect(file).not.toContain(later.batchId);
  });
});
