import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { applyBatch } from '../support/apply.ts';
import { startHarness, type Harness } from '../support/harness.ts';

describe('v2 reads: entities, revisions, change feeds', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ env: { UPDATES_FROM_MAX: '3' } });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const apply = (xml: string) => applyBatch(harness, xml);

  const attribute = (xml: string, name: string) => new RegExp(`\\b${name}="([^"]+)"`).exec(xml)![1]!;

  it('reads the current record by number and by UUID, with an ETag that answers 304', async () => {
    const { result } = await apply(batchXml([create('a', 'Tomáš Garrigue Masaryk', { entityType: `T-${randomUUID()}` })]));
    const entityId = attribute(result, 'entityId');
    const entityUuid = attribute(result, 'entityUuid');
    const byNumber = await harness.api(`/api/v2/entities/${entityId}`);
    expect(byNumber.status).toBe(200);
    expect(byNumber.headers.get('content-type')).toContain('application/xml');
    const xml = await byNumber.text();
    expect(xml).toContain('<entity ');
    expect(xml).toContain('Tomáš Garrigue Masaryk');
    const byUuid = await harness.api(`/api/v2/entities/${entityUuid.toUpperCase()}`);
    expect(await byUuid.text()).toBe(xml);
    const etag = byNumber.headers.get('etag')!;
    expect(etag).toContain(attribute(result, 'rev'));
    const cached = await harness.api(`/api/v2/entities/${entityId}`, { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
  });

  it('answers 404 EntityNotFound for unknown records, also for references that are neither an int32 number nor a UUID', async () => {
    const missing = await harness.api('/api/v2/entities/987654321');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'EntityNotFound', message: 'no entity 987654321' });
    expect((await harness.api(`/api/v2/entities/${randomUUID()}`)).status).toBe(404);
    for (const bad of ['abc', '-1', '0', '1.5', '2147483648', '99999999999999999999']) {
      const response = await harness.api(`/api/v2/entities/${bad}`);
      expect(response.status, bad).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'EntityNotFound' });
    }
  });

  it('reads a record as it was in each revision, and not through another entity', async () => {
    const entityType = `T-${randomUUID()}`;
    const first = await apply(batchXml([create('a', 'Původní Jméno', { entityType }), create('b', 'Jiný Záznam', { entityType })]));
    const entityId = Number(attribute(first.result, 'entityId'));
    const rev1 = attribute(first.result, 'rev');
    const otherId = Number(/localId="b"[^>]*entityId="(\d+)"|entityId="(\d+)"[^>]*localId="b"/.exec(first.result)!.slice(1).find(Boolean));
    const second = await apply(batchXml([update('a', entityId, rev1, [{ op: 'setEntityType', entityType: `${entityType}-2` }])]));
    const rev2 = attribute(second.result, 'rev');

    const old = await harness.api(`/api/v2/entities/${entityId}/revision/${rev1}`);
    expect(old.status).toBe(200);
    expect(await old.text()).toContain(`entityType="${entityType}"`);
    const now = await (await harness.api(`/api/v2/entities/${entityId}/revision/${rev2}`)).text();
    expect(now).toContain(`entityType="${entityType}-2"`);
    expect(now).toContain(`<prevRev>${rev1}</prevRev>`);

    const elsewhere = await harness.api(`/api/v2/entities/${otherId}/revision/${rev1}`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ code: 'RevisionNotFound' });
    expect((await harness.api(`/api/v2/entities/${entityId}/revision/${randomUUID()}`)).status).toBe(404);
    expect((await harness.api(`/api/v2/entities/${entityId}/revision/nope`)).status).toBe(400);
  });

  it('lists records changed between two transactions: exclusive from, inclusive to, each once with its latest rev', async () => {
    const entityType = `T-${randomUUID()}`;
    const t0 = await apply(batchXml([create('a', 'Start', { entityType })]));
    const t1 = await apply(batchXml([create('x', 'První', { entityType }), create('y', 'Druhý', { entityType })]));
    const x = Number(/entityId="(\d+)"/.exec(t1.result)![1]);
    const xRev = attribute(t1.result, 'rev');
    const t2 = await apply(batchXml([update('x', x, xRev, [{ op: 'setEntityType', entityType: `${entityType}-b` }])]));
    const xRev2 = attribute(t2.result, 'rev');

    const page = await harness.api(`/api/v2/updates?fromTransId=${t0.transaction}&toTransId=${t2.transaction}&page=1&pageSize=10`);
    expect(page.status).toBe(200);
    const xml = await page.text();
    expect(xml).toContain('<updates');
    expect(xml.match(/<revInfo /g)).toHaveLength(2);
    expect(xml).toContain(`rev="${xRev2}"`);
    expect(xml).not.toContain(`rev="${xRev}"`);

    const onlyT1 = await (
      await harness.api(`/api/v2/updates?fromTransId=${t0.transaction}&toTransId=${t1.transaction}&page=1&pageSize=10`)
    ).text();
    expect(onlyT1).toContain(`rev="${xRev}"`);
    const empty = await (
      await harness.api(`/api/v2/updates?fromTransId=${t2.transaction}&toTransId=${t2.transaction}&page=1&pageSize=10`)
    ).text();
    expect(empty).not.toContain('<revInfo');

    const first = await (
      await harness.api(`/api/v2/updates?fromTransId=${t0.transaction}&toTransId=${t2.transaction}&page=1&pageSize=1`)
    ).text();
    const second = await (
      await harness.api(`/api/v2/updates?fromTransId=${t0.transaction}&toTransId=${t2.transaction}&page=2&pageSize=1`)
    ).text();
    const again = await (
      await harness.api(`/api/v2/updates?fromTransId=${t0.transaction}&toTransId=${t2.transaction}&page=1&pageSize=1`)
    ).text();
    expect(first).toBe(again);
    expect(attribute(first, 'entityId')).not.toBe(attribute(second, 'entityId'));
  });

  it('rejects bad update queries: unknown transaction 404, reversed range 400, page size over 50000 400', async () => {
    const a = await apply(batchXml([create('a', 'Okraj A', { entityType: `T-${randomUUID()}` })]));
    const b = await apply(batchXml([create('a', 'Okraj B', { entityType: `T-${randomUUID()}` })]));
    const unknownId = randomUUID();
    const unknown = await harness.api(`/api/v2/updates?fromTransId=${unknownId}&toTransId=${b.transaction}&page=1&pageSize=10`);
    expect(unknown.status).toBe(404);
    // Also the real ErrorTransactionNotFound and BaseException: transactionId, message and properties.
    expect(await unknown.json()).toMatchObject({
      code: 'TransactionNotFound',
      transactionId: unknownId,
      properties: { transactionId: unknownId },
      message: `no transaction ${unknownId}`,
    });
    const zero = await harness.api(`/api/v2/updates?fromTransId=${a.transaction}&toTransId=${b.transaction}&page=0&pageSize=10`);
    expect(zero.status).toBe(400);
    expect(JSON.stringify(await zero.json())).toContain('pages start at 1');
    expect((await harness.api(`/api/v2/updates?fromTransId=${b.transaction}&toTransId=${a.transaction}&page=1&pageSize=10`)).status).toBe(
      400,
    );
    const big = await harness.api(`/api/v2/updates?fromTransId=${a.transaction}&toTransId=${b.transaction}&page=1&pageSize=50001`);
    expect(big.status).toBe(400);
    expect(await big.json()).toMatchObject({ code: 'PageSizeTooLarge' });
    const missing = await harness.api(`/api/v2/updates?fromTransId=${a.transaction}&page=1&pageSize=10`);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { errors: { path: string }[] }).errors[0]!.path).toBe('query.toTransId');
    // The page parameter is shared with search: pages count from 1, and a missing one is named as required.
    const pageZero = await harness.api(`/api/v2/updates?fromTransId=${a.transaction}&toTransId=${b.transaction}&page=0&pageSize=10`);
    expect(pageZero.status).toBe(400);
    expect(await pageZero.json()).toMatchObject({
      errors: [{ path: 'query.page', message: 'pages start at 1: page=1 is the first page' }],
    });
    const noPage = await harness.api(`/api/v2/updates?fromTransId=${a.transaction}&toTransId=${b.transaction}&pageSize=10`);
    expect(await noPage.json()).toMatchObject({ errors: [{ path: 'query.page', message: 'page is required' }] });
  });

  it('lists everything after a transaction, or only the summary above UPDATES_FROM_MAX', async () => {
    const entityType = `T-${randomUUID()}`;
    const start = await apply(batchXml([create('a', 'Počátek', { entityType })]));
    await apply(batchXml([create('a', 'Jedna', { entityType }), create('b', 'Dvě', { entityType })]));
    const small = await harness.api(`/api/v2/updates/from/${start.transaction}`);
    expect(small.status).toBe(200);
    const smallXml = await small.text();
    expect(smallXml).toContain('<updatesFrom');
    expect(smallXml).toMatch(/<count>2<\/count>/);
    expect(smallXml.match(/<revInfo /g)).toHaveLength(2);

    const last = await apply(batchXml([create('a', 'Tři', { entityType }), create('b', 'Čtyři', { entityType })]));
    const large = await (await harness.api(`/api/v2/updates/from/${start.transaction}`)).text();
    expect(large).toMatch(/<count>4<\/count>/);
    expect(large).toContain(`<to>${last.transaction}</to>`);
    expect(large).not.toContain('<revInfo');

    const unknown = await harness.api(`/api/v2/updates/from/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'TransactionNotFound' });
  });

  it('starts history at the genesis transaction the real client syncs from (v2 from, v2 pages, v1 from)', async () => {
    const entityType = `T-${randomUUID()}`;
    const applied = await apply(batchXml([create('g', 'Od Počátku', { entityType })]));
    const from = await harness.api(`/api/v2/updates/from/${GENESIS_TRANSACTION_ID}`);
    expect(from.status).toBe(200);
    expect(await from.text()).toMatch(/<updatesFrom /);
    // Page by page: the run's other files may have written more than a page of the range before this record.
    const entityId = `entityId="${applied.revisions.get('g')!.entityId}"`;
    for (let page = 1; ; page += 1) {
      const paged = await harness.api(
        `/api/v2/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${applied.transaction}&page=${page}&pageSize=50000`,
      );
      expect(paged.status).toBe(200);
      const text = await paged.text();
      if (text.includes(entityId)) break;
      expect(text.split('<revInfo ').length - 1, `page ${page} is full, or the record was on it`).toBe(50_000);
    }
    const v1 = await harness.api(`/api/v1/updates/from/${GENESIS_TRANSACTION_ID}`);
    expect(v1.status).toBe(200);
  });

  it('answers XML from XML endpoints whatever Accept says (the generated client sends application/json)', async () => {
    const applied = await apply(batchXml([create('j', 'Přijímač', { entityType: `T-${randomUUID()}` })]));
    const headers = { accept: 'application/json' };
    const entity = await harness.api(`/api/v2/entities/${applied.revisions.get('j')!.entityId}`, { headers });
    expect(entity.status).toBe(200);
    expect(entity.headers.get('content-type')).toContain('xml');
    const updates = await harness.api(`/api/v2/updates/from/${applied.transaction}`, { headers });
    expect(updates.status).toBe(200);
    expect(await updates.text()).toContain('<updatesFrom');
  });

  it('refuses reads without a token (401 with WWW-Authenticate) and with an unknown one', async () => {
    const anonymous = await harness.api('/api/v2/entities/1', { as: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain('Bearer');
    const forged = await fetch(`${harness.baseUrl}/api/v2/entities/1`, { headers: { authorization: 'Bearer not-a-real-token-at-all' } });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ code: 'Unauthorized' });
  });
});
