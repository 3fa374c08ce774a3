import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROAD_SEARCHES, sendSearch } from '../../bench/lib/broad-searches.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';

// The broad and odd searches of the refusals benchmark (bench/refusals.ts),
// each sent to v2 and v1: answered, or refused with a reason, never a 5xx;
// the benchmark times them on a million records. Meanwhile an ordinary
// client's save and search succeed. With a count budget this small every
// search that needs a total beyond its page is priced above it, so the
// refusal is decided before the page and a short page is still answered.

const READER = { authorization: `Bearer ${TEST_TOKENS.read}` };

describe('broad and odd searches', () => {
  let harness: Harness;
  let tight: Harness;
  const marker = `Refusals ${randomUUID()}`;
  beforeAll(async () => {
    harness = await startHarness();
    tight = await startHarness({ worker: false, env: { SEARCH_MAX_MATCHES: '1' } });
    const saved = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', `${marker} Nováková`), create('b', `${marker} Novák`)]),
    });
    expect((await batchEnded(harness, (await saved.json()) as string)).status).toBe('COMPLETED');
  });
  afterAll(async () => {
    await tight?.close();
    await harness?.close();
  });

  it('answers or refuses each with a reason, in both versions, and never with a 5xx', async () => {
    for (const server of [harness, tight]) {
      for (const version of ['v2', 'v1'] as const) {
        for (const search of BROAD_SEARCHES) {
          const outcome = await sendSearch(server.baseUrl, version, search, READER);
          const what = `${version} ${search.name}`;
          expect(outcome.status, what).toBeLessThan(500);
          if (outcome.status !== 200) {
            expect(outcome.status, what).toBeGreaterThanOrEqual(400);
            expect(outcome.reason, what).toBeDefined();
          }
        }
      }
    }
    // The ordinary client meanwhile: its search finds both records.
    const ordinary = await harness.api('/api/v2/search?page=1&pageSize=20', {
      method: 'POST',
      as: 'read',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cond: { condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_STARTS_WITH', value: marker } }),
    });
    expect(ordinary.status).toBe(200);
    expect((await ordinary.text()).match(/entityId/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
  });

  it('refuses a search whose total counts past SEARCH_MAX_MATCHES when the page is full, and answers a short one', async () => {
    const bare = BROAD_SEARCHES.find((search) => search.name === 'bare part PT_NAME')!;
    const refused = await tight.api('/api/v2/search?page=1&pageSize=1', {
      method: 'POST',
      as: 'read',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(bare.body('v2')),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { properties?: { reason?: string } }).properties?.reason).toBe('SearchTooBroad');
    // The same shape with a value one record holds: its index reads one row, within the cap, and its page is its own total.
    const short = await tight.api('/api/v2/search?page=1&pageSize=20', {
      method: 'POST',
      as: 'read',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        cond: {
          condType: 'PART',
          partType: 'PT_NAME',
          cond: { condType: 'VALUE', itemTypes: ['NM_MAIN'], comparator: 'CT_EQ', value: `${marker} Novák` },
        },
      }),
    });
    expect(short.status).toBe(200);
    expect((await short.text()).match(/entityId/g)?.length).toBe(1);
  });
});
