import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

// Another writer sends the id of someone else's FAILED batch, with a body of
// its own: refused, and the batch stays its submitter's. Its submitter, a
// principal that may force, and a request with the batch's own force key may
// send it again.

describe('a FAILED batch cannot be taken over', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  const post = (xml: string, as: 'write' | 'force' | 'admin') =>
    harness.api('/api/v2/batches', { method: 'POST', as, headers: { 'content-type': 'application/xml' }, body: xml });
  const failedBatch = async (as: 'write' | 'admin') => {
    const uuid = randomUUID();
    const response = await post(
      batchXml([update('bad', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { uuid }),
      as,
    );
    expect(response.status).toBe(200);
    expect((await batchEnded(harness, uuid)).status).toBe('FAILED');
    return uuid;
  };
  const submitter = async (uuid: string) =>
    (await harness.sql<{ submitted_by: string }>('select submitted_by from batch where id = $1', [uuid]))[0]!.submitted_by;

  it('refuses another writer reviving it with a body of its own, and lets its submitter and a principal with force send it again', async () => {
    const uuid = await failedBatch('admin');
    const hijack = await post(batchXml([create('mine', `Hijack ${randomUUID()}`)], { uuid }), 'write');
    expect(hijack.status).toBe(409);
    expect(await submitter(uuid)).toBe('test-admin');
    expect((await harness.api(`/api/v2/batches/${uuid}/detail`)).status).toBe(200);
    expect(((await (await harness.api(`/api/v2/batches/${uuid}/detail`)).json()) as { status: string }).status).toBe('FAILED');

    // Its submitter may, with a corrected body.
    const own = await post(batchXml([create('fixed', `Fixed ${randomUUID()}`)], { uuid }), 'admin');
    expect(own.status).toBe(200);
    expect((await batchEnded(harness, uuid)).status).toBe('COMPLETED');

    // A principal with the force permission may take over another's failed batch.
    const other = await failedBatch('write');
    const forced = await post(batchXml([create('forced', `Forced ${randomUUID()}`)], { uuid: other }), 'force');
    expect(forced.status).toBe(200);
    expect(await submitter(other)).toBe('test-forcer');
    expect((await batchEnded(harness, other)).status).toBe('COMPLETED');
    // The ordinary reads meanwhile.
    expect((await harness.api(`/api/v2/batches/${uuid}/status`, { as: 'read' })).status).toBe(200);
  });
});
