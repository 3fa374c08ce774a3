// The real client's sync loop over v1, exactly as it runs (ELZA's CamService):
// GET /api/v1/updates/from/{mark}; when the answer is a summary only, pages of
// 1000 of GET /api/v1/updates from page 1, the (to, page) saved after every
// page, until a short page or the summary's remaining count reaches 0; a 404
// for its mark sends it back to the genesis transaction for a whole re-walk.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, namePart, update } from '../support/batches.ts';
import { elementText, listedPointers, referencePage } from '../support/feed-reference.ts';
import { startHarness, type Harness } from '../support/harness.ts';

const PAGE_SIZE = 1000;

/** What the client keeps between runs: its mark and, mid-walk, the range and the next page. */
interface SavedState {
  mark: string;
  walk?: { to: string; nextPage: number; remaining: number };
}

describe('the real client syncing from the v1 change feed', () => {
  let harness: Harness;
  const entityType = `SYNC-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    // A summary above 100 records, so that the loop pages.
    harness = await startHarness({ env: { UPDATES_FROM_MAX: '100' } });
  });

  afterAll(async () => {
    await harness?.close();
  });

  async function get(path: string): Promise<Response> {
    return harness.api(`/api/v1${path}`, { as: 'read' });
  }

  /**
   * One run of the client's loop from its saved state, stopping after
   * `maxPages` pages (a restart mid-walk) or at the end of its range. Returns
   * each page's entity ids in order.
   */
  async function run(state: SavedState, maxPages = Infinity): Promise<number[][]> {
    const pages: number[][] = [];
    if (!state.walk) {
      const response = await get(`/updates/from/${state.mark}`);
      if (response.status === 404) {
        state.mark = GENESIS_TRANSACTION_ID;
        return run(state, maxPages);
      }
      const summary = await response.text();
      expect(response.status, summary).toBe(200);
      const to = elementText(summary, 'to');
      if (summary.includes('<ups>') || summary.includes('<ups/>')) {
        pages.push(listedPointers(summary).map((pointer) => pointer.entityId));
        state.mark = to;
        return pages;
      }
      state.walk = { to, nextPage: 1, remaining: Number(elementText(summary, 'cnt')) };
    }
    while (pages.length < maxPages) {
      const walk = state.walk!;
      const response = await get(`/updates?fromTransId=${state.mark}&toTransId=${walk.to}&page=${walk.nextPage}&pageSize=${PAGE_SIZE}`);
      const text = await response.text();
      expect(response.status, text).toBe(200);
      const ids = listedPointers(text).map((pointer) => pointer.entityId);
      pages.push(ids);
      walk.remaining -= ids.length;
      walk.nextPage += 1;
      if (ids.length < PAGE_SIZE || walk.remaining <= 0) {
        state.mark = walk.to;
        delete state.walk;
        break;
      }
    }
    return pages;
  }

  /** Every record of the range (from, to] by the plain definition. */
  async function recordsBetween(from: string, to: string): Promise<number[]> {
    return (await referencePage(harness, from, to, 1, 1_000_000)).map((pointer) => pointer.entityId);
  }

  function expectEachOnce(pages: number[][], expected: number[]): void {
    const seen = pages.flat();
    for (const page of pages) expect(new Set(page).size, 'a record twice in one page').toBe(page.length);
    expect(new Set(seen).size, 'a record twice in one walk').toBe(seen.length);
    expect([...seen].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b));
  }

  it('walks from genesis in pages of 1000, resumes days later at its saved page while batches commit, follows on, and re-walks after a 404', async () => {
    const loaded = await applyBatch(
      harness,
      batchXml(Array.from({ length: 2500 }, (_, n) => create(`r${n}`, `Synchronizovaný ${n}`, { entityType }))),
    );
    const state: SavedState = { mark: GENESIS_TRANSACTION_ID };

    // The first walk: two pages, then the client is stopped.
    const firstPages = await run(state, 2);
    expect(firstPages.map((page) => page.length)).toEqual([PAGE_SIZE, PAGE_SIZE]);
    const walkTo = state.walk!.to;
    expect(state.walk!.nextPage).toBe(3);

    // Meanwhile archivists save: updates of records on the pages already read, and new records.
    const revisions = [...loaded.revisions.values()];
    const changed = await applyBatch(
      harness,
      batchXml([
        ...[0, 1, 1500].map((n) =>
          update(`u${n}`, revisions[n]!.entityId, revisions[n]!.rev, [{ op: 'newPart', part: namePart(`Nové jméno ${n}`) }]),
        ),
        ...Array.from({ length: 10 }, (_, n) => create(`n${n}`, `Nový ${n}`, { entityType })),
      ]),
    );

    // Resumed at its saved (to, page): the rest of the same closed range, each record once.
    const restPages = await run(state);
    expect(state.walk).toBeUndefined();
    expect(state.mark).toBe(walkTo);
    expectEachOnce([...firstPages, ...restPages], await recordsBetween(GENESIS_TRANSACTION_ID, walkTo));

    // The next sync lists what committed since, directly (few enough).
    const follow = await run(state);
    expect(follow).toHaveLength(1);
    expectEachOnce(
      follow,
      [...changed.revisions.values()].map((revision) => revision.entityId),
    );
    expect(state.mark).toBe(changed.transaction);

    // A mark the registry does not know (a restored database): back to genesis, the whole walk again.
    state.mark = randomUUID();
    const rewalk = await run(state);
    expect(rewalk.length).toBeGreaterThanOrEqual(3);
    expectEachOnce(rewalk, await recordsBetween(GENESIS_TRANSACTION_ID, state.mark));
  });
});
