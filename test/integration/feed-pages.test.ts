// Pages of the change feed found from a kept layout of their range (anchors
// every FEED_RANGE_ANCHOR_EVERY records) are exactly the pages of the plain
// definition (test/support/feed-reference.ts), for every page size, for
// ranges dense and sparse, made while another batch was still in flight, and
// days later from a layout made afresh, or retention dropped it mid-page.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBatch, type AppliedBatch } from '../support/apply.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create, namePart, update } from '../support/batches.ts';
import { elementText, listedPointers, referencePage, type ReferencePointer } from '../support/feed-reference.ts';
import { Gate } from '../support/gate.ts';
import { startHarness, type Harness } from '../support/harness.ts';

describe('feed pages from kept range layouts', () => {
  let harness: Harness;
  const gate = new Gate();
  const entityType = `FEED-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    harness = await startHarness({
      env: { FEED_RANGE_ANCHOR_EVERY: '3', UPDATES_FROM_MAX: '4' },
      afterWriteStep: (batchId) => gate.pass(batchId),
    });
  });

  afterAll(async () => {
    await harness?.close();
  });

  const creates = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, n) => create(`${prefix}${n}`, `${prefix} Záznam ${n}`, { entityType }));

  async function servicePage(version: 'v1' | 'v2', from: string, to: string, page: number, pageSize: number): Promise<ReferencePointer[]> {
    const response = await harness.api(`/api/${version}/updates?fromTransId=${from}&toTransId=${to}&page=${page}&pageSize=${pageSize}`);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const listed = listedPointers(text);
    return version === 'v1' ? listed.map(({ entityId, rev }) => ({ entityId, rev, metadataRev: '' })) : listed;
  }

  /** Every page of the range at this size, against the reference, until the first short page. */
  async function expectPagesMatch(from: string, to: string, pageSize: number): Promise<number> {
    let seen = 0;
    for (let page = 1; ; page += 1) {
      const expected = await referencePage(harness, from, to, page, pageSize);
      expect(await servicePage('v2', from, to, page, pageSize), `page ${page} of ${pageSize}`).toEqual(expected);
      seen += expected.length;
      if (expected.length < pageSize) return seen;
    }
  }

  let first: AppliedBatch;
  let last: AppliedBatch;

  it('serves every page of every size as the plain definition does, dense and sparse ranges alike', async () => {
    // Ranges from a mark of this file's own: from genesis a full test run holds thousands of records, too many for pages of 1.
    const mark = await applyBatch(harness, batchXml(creates('m', 1)));
    first = await applyBatch(harness, batchXml(creates('a', 11)));
    const ids = [...first.revisions.values()];
    // Updates of a few records, and new ones: the range after `first` is sparse among the ids.
    await applyBatch(
      harness,
      batchXml([update('u1', ids[1]!.entityId, ids[1]!.rev, [{ op: 'newPart', part: namePart('Druhé jméno') }]), ...creates('b', 4)]),
    );
    last = await applyBatch(
      harness,
      batchXml([update('u2', ids[7]!.entityId, ids[7]!.rev, [{ op: 'newPart', part: namePart('Třetí jméno') }])]),
    );

    for (const pageSize of [1, 2, 3, 4, 7, 1000]) {
      expect(await expectPagesMatch(mark.transaction, last.transaction, pageSize)).toBe(15);
      expect(await expectPagesMatch(first.transaction, last.transaction, pageSize)).toBe(6);
    }
    // Pages past the end are empty, not an error.
    expect(await servicePage('v2', first.transaction, last.transaction, 99, 2)).toEqual([]);
    // v1 lists the same records in the same order.
    const v1 = await servicePage('v1', first.transaction, last.transaction, 2, 4);
    expect(v1.map(({ entityId, rev }) => [entityId, rev])).toEqual(
      (await referencePage(harness, first.transaction, last.transaction, 2, 4)).map(({ entityId, rev }) => [entityId, rev]),
    );
  });

  it('keeps a range paged while a batch that began before its end was in flight exactly as it was, before and after that batch commits', async () => {
    const held = randomUUID();
    gate.hold(held);
    const submitted = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml(creates('held', 3), { uuid: held }),
    });
    expect(submitted.status).toBe(200);
    const release = await gate.reached(held);
    // Began after the held batch, committed before it: its seq is above the held one's, so the range's seqs enclose a transaction in flight.
    const after = await applyBatch(harness, batchXml(creates('c', 5)));
    const before = [];
    for (let page = 1; page <= 4; page += 1) before.push(await servicePage('v2', first.transaction, after.transaction, page, 3));
    release();
    expect((await batchEnded(harness, held)).status).toBe('COMPLETED');

    for (let page = 1; page <= 4; page += 1) {
      expect(await servicePage('v2', first.transaction, after.transaction, page, 3)).toEqual(before[page - 1]);
      expect(before[page - 1]).toEqual(await referencePage(harness, first.transaction, after.transaction, page, 3));
    }
    // Days later, the kept layouts gone: made afresh, the pages are the same.
    await harness.sql('delete from feed_range');
    for (let page = 1; page <= 4; page += 1)
      expect(await servicePage('v2', first.transaction, after.transaction, page, 3)).toEqual(before[page - 1]);
    last = after;
  });

  it('keeps the range that /updates/from summarises, with an exact count, for the pages that follow', async () => {
    const summary = await (await harness.api(`/api/v2/updates/from/${first.transaction}`)).text();
    const to = elementText(summary, 'to');
    const count = Number(elementText(summary, 'count'));
    expect(summary).not.toContain('<revInfo');
    const [counted] = await harness.sql<{ n: string }>(
      `select count(*) as n from feed_range where from_commit_seq = (select commit_seq from transaction where uuid = $1) and to_commit_seq = (select commit_seq from transaction where uuid = $2)`,
      [first.transaction, to],
    );
    expect(Number(counted!.n)).toBe(1);
    let listed = 0;
    for (let page = 1; listed < count; page += 1) listed += (await servicePage('v2', first.transaction, to, page, 2)).length;
    expect(listed).toBe(count);
    expect(count).toBe((await referencePage(harness, first.transaction, to, 1, 10_000)).length);

    // A range small enough to list (the held batch's three records) is listed, and not kept.
    const kept = (await harness.sql<{ n: string }>('select count(*) as n from feed_range'))[0]!.n;
    const small = await (await harness.api(`/api/v2/updates/from/${last.transaction}`)).text();
    expect(Number(elementText(small, 'count'))).toBe(3);
    expect(listedPointers(small)).toEqual(await referencePage(harness, last.transaction, elementText(small, 'to'), 1, 10));
    expect((await harness.sql<{ n: string }>('select count(*) as n from feed_range'))[0]!.n).toBe(kept);
  });

  it('extends a kept range by what committed since, instead of passing over it again: the same exact count and pages', async () => {
    const summary = await (await harness.api(`/api/v2/updates/from/${first.transaction}`)).text();
    const to = elementText(summary, 'to');
    const ids = (await referencePage(harness, first.transaction, to, 1, 1000)).map((pointer) => pointer.entityId);
    // New records (ids above every anchor), and updates of records in the range and of one before it.
    const oldRev = (
      await harness.sql<{ rev: string }>('select r.rev from revision r where r.entity_id = $1 order by r.seq desc limit 1', [ids[2]])
    )[0]!.rev;
    const earlierRev = (
      await harness.sql<{ rev: string }>(
        'select r.rev from revision r join entity e on e.id = r.entity_id where e.entity_type = $1 and e.id < $2 order by r.seq desc limit 1',
        [entityType, ids[0]],
      )
    )[0]!.rev;
    const earlierId = (await harness.sql<{ entity_id: string }>('select entity_id from revision where rev = $1', [earlierRev]))[0]!
      .entity_id;
    await applyBatch(
      harness,
      batchXml([
        update('ux1', ids[2]!, oldRev, [{ op: 'newPart', part: namePart('Rozšířené jméno') }]),
        update('ux2', Number(earlierId), earlierRev, [{ op: 'newPart', part: namePart('Dřívější záznam') }]),
        ...creates('x', 4),
      ]),
    );
    const extended = await (await harness.api(`/api/v2/updates/from/${first.transaction}`)).text();
    const newTo = elementText(extended, 'to');
    expect(newTo).not.toBe(to);
    const reference = await referencePage(harness, first.transaction, newTo, 1, 1000);
    expect(Number(elementText(extended, 'count'))).toBe(reference.length);
    for (const pageSize of [1, 2, 3, 5]) expect(await expectPagesMatch(first.transaction, newTo, pageSize)).toBe(reference.length);
    // Extended, not made afresh: the earlier record was inserted before the old anchors, which moved off the multiples of 3.
    const positions = (await keptAnchors(first.transaction, newTo)).map((anchor) => anchor.position);
    expect(positions.some((position, index) => position % 3 !== 0 && index < positions.length - 1)).toBe(true);
  });

  it('keeps an anchor a row, every third record and the last, and serves a page whose kept layout retention dropped while it was read', async () => {
    const feed = harness.db.feed;
    // Laid out afresh, not extended from the range the test before kept.
    await harness.sql('delete from feed_range');
    const from = (await feed.findTransaction(first.transaction))!;
    const to = (await feed.latestTransaction())!;
    await feed.range(from, to, 1);
    // Read as kept: its pages find their anchors in feed_range_anchor.
    const range = await feed.range(from, to, 1);
    const anchors = await keptAnchors(from.uuid, to.uuid);
    const all = await referencePage(harness, from.uuid, to.uuid, 1, 1_000_000);
    expect(range.records).toBe(all.length);
    expect(anchors.length).toBe(Math.ceil(all.length / 3));
    expect(anchors.at(-1)).toEqual({ position: all.length, entityId: all.at(-1)!.entityId });
    for (const anchor of anchors) expect(anchor.entityId).toBe(all[anchor.position - 1]!.entityId);

    await harness.sql('delete from feed_range where from_commit_seq = $1 and to_commit_seq = $2', [from.commitSeq, to.commitSeq]);
    expect(await keptAnchors(from.uuid, to.uuid)).toEqual([]);
    const listed = [];
    for await (const rows of feed.streamRange(range, 4, 5))
      listed.push(...rows.map(({ entityId, rev, metadataRev }) => ({ entityId, rev, metadataRev })));
    expect(listed).toEqual(all.slice(4, 9));
  });

  async function keptAnchors(fromUuid: string, toUuid: string): Promise<Array<{ position: number; entityId: number }>> {
    const rows = await harness.sql<{ position: string; entity_id: string }>(
      `select position, entity_id from feed_range_anchor
        where from_commit_seq = (select commit_seq from transaction where uuid = $1)
          and to_commit_seq = (select commit_seq from transaction where uuid = $2)
        order by position`,
      [fromUuid, toUuid],
    );
    return rows.map((row) => ({ position: Number(row.position), entityId: Number(row.entity_id) }));
  }
});
