import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';

type Status = {
  updateRequestId: string;
  state: string;
  progress: number;
  status: string;
  changesTotal: number;
  changesApplied: number;
  submittedAt: string;
  finishedAt: string | null;
};

describe('v2 batches', () => {
  let harness: Harness;
  let injectedFaults = 0;
  beforeAll(async () => {
    harness = await startHarness({
      env: { TEST_BATCH_MAX_CHANGES: '3' },
      afterWriteStep: (_batchId, _done, attempt) => {
        // Only batches marked by the idempotency test fail, and only on their first attempt.
        if (failNextApply.has(_batchId) && attempt === 1) {
          injectedFaults += 1;
          throw new Error('injected fault after rows were written');
        }
      },
    });
  });
  afterAll(async () => {
    await harness?.close();
  });
  const failNextApply = new Set<string>();

  const post = (xml: string, query = '', as: keyof typeof TEST_TOKENS = 'admin') =>
    harness.api(`/api/v2/batches${query}`, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml, as });

  async function submit(xml: string, query = ''): Promise<string> {
    const response = await post(xml, query);
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as string;
  }

  /** The detail resource once the batch has ended. */
  async function finished(batchId: string): Promise<Status> {
    await batchEnded(harness, batchId);
    return (await (await harness.api(`/api/v2/batches/${batchId}/detail`)).json()) as Status;
  }

  async function result(batchId: string): Promise<string> {
    const response = await harness.api(`/api/v2/batches/${batchId}/result`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/xml');
    return response.text();
  }

  async function createOne(name: string): Promise<{ entityId: number; rev: string }> {
    const batchId = await submit(batchXml([create('n1', name, { entityType: `T-${randomUUID()}` })]));
    expect((await finished(batchId)).status).toBe('COMPLETED');
    const xml = await result(batchId);
    return { entityId: Number(/entityId="(\d+)"/.exec(xml)![1]), rev: /\brev="([^"]+)"/.exec(xml)![1]! };
  }

  it('applies a batch: 200 with the id as a JSON string, status {state, progress} and nothing else, detail with counts, a success result, one transaction', async () => {
    const uuid = randomUUID();
    const response = await post(batchXml([create('a', 'Karel Čapek'), create('b', 'Božena Němcová')], { uuid }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(response.headers.get('location')).toBe(`/api/v2/batches/${uuid}/detail`);
    expect(await response.text()).toBe(`"${uuid}"`);

    const status = await finished(uuid);
    expect(status).toMatchObject({
      updateRequestId: uuid,
      state: 'FINISHED',
      progress: 100,
      status: 'COMPLETED',
      changesTotal: 2,
      changesApplied: 2,
    });
    expect(await (await harness.api(`/api/v2/batches/${uuid}/status`)).json()).toStrictEqual({ state: 'FINISHED', progress: 100 });
    expect(Date.parse(status.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(status.submittedAt));

    const xml = await result(uuid);
    expect(xml).toContain('batchChangeSuccess');
    expect(xml.match(/<revision /g)).toHaveLength(2);
    const [transaction] = await harness.sql<{ uuid: string }>('select uuid from transaction where batch_id = $1', [uuid]);
    expect(xml).toContain(`transaction="${transaction!.uuid}"`);
    const revisions = await harness.sql<{ n: string }>('select count(*) as n from revision where batch_id = $1', [uuid]);
    expect(Number(revisions[0]!.n)).toBe(2);
  });

  it('stores the result of a batch over 2,000 entities (sent to the row by COPY, in pieces) as the smaller ones: every revision once, as its rows say, also for two such batches at once', async () => {
    const size = 2_100;
    // Two at once, each on its own connection and its own temporary row: neither sees the other's pieces.
    const batches = [randomUUID(), randomUUID()].map((uuid) => ({ uuid, entityType: `LARGE-${randomUUID()}` }));
    await Promise.all(
      batches.map(async ({ uuid, entityType }) => {
        // Non-ASCII localIds (xs:ID admits letters of any script): the pieces go to COPY as UTF-8.
        const commands = Array.from({ length: size }, (_, index) => create(`záznam${index}`, `Velký záznam ${index}`, { entityType }));
        expect((await post(batchXml(commands, { uuid }))).status).toBe(200);
      }),
    );
    for (const { uuid } of batches) {
      expect((await finished(uuid)).status).toBe('COMPLETED');
      const [stored] = await harness.sql<{ outcome: string; lines: number; matching: string }>(
        `select result->>'outcome' as outcome, jsonb_array_length(result->'revisions') as lines,
           (select count(*) from jsonb_to_recordset(result->'revisions') as line("localId" text, "entityUuid" uuid, "metadataRev" uuid)
              join revision r on r.uuid = line."metadataRev" and r.batch_id = $1
              join entity e on e.id = r.entity_id and e.uuid = line."entityUuid") as matching
         from batch where id = $1`,
        [uuid],
      );
      expect(stored).toEqual({ outcome: 'success', lines: size, matching: String(size) });
      const xml = await result(uuid);
      expect(xml.match(/<revision /g)).toHaveLength(size);
      expect(xml).toContain('localId="záznam2099"');
    }
  });

  it('answers 404 BatchNotFound for unknown ids and 400 for ids that are not UUIDs', async () => {
    const unknown = await harness.api(`/api/v2/batches/${randomUUID()}/status`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    expect(await unknown.json()).toMatchObject({ code: 'BatchNotFound', status: 404 });
    expect((await harness.api(`/api/v2/batches/${randomUUID()}/result`)).status).toBe(404);
    expect((await harness.api(`/api/v2/batches/${randomUUID()}/detail`)).status).toBe(404);
    const bad = await harness.api('/api/v2/batches/not-a-uuid/status');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'BadRequest' });
    const test = await harness.api('/api/v2/batches/test');
    expect(test.status).toBe(405);
    expect(test.headers.get('allow')).toContain('POST');
  });

  it('rejects malformed XML, schema violations (with line and column), wrong media types and oversized bodies', async () => {
    const malformed = await post('<batchUpdate xmlns="http://cam.tacr.cz/2025"><info>');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'InvalidXml' });

    const invalid = await post('<?xml version="1.0"?>\n<batchUpdate xmlns="http://cam.tacr.cz/2025">\n  <bogus/>\n</batchUpdate>');
    expect(invalid.status).toBe(400);
    const body = (await invalid.json()) as { code: string; errors: { line: number; column: number; message: string }[] };
    expect(body.code).toBe('SchemaViolation');
    expect(body.errors[0]).toMatchObject({ line: expect.any(Number), message: expect.any(String) });
    expect(body.errors[0]!.line).toBeGreaterThanOrEqual(2);

    const v1 = await post(batchXml([create('a', 'Jan Neruda')], { version: 'v1' }));
    expect(v1.status).toBe(400);
    expect(await v1.json()).toMatchObject({
      code: 'SchemaViolation',
      detail: expect.stringContaining('send v1 batches to /api/v1/batches'),
    });

    const wrongType = await harness.api('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toMatchObject({ code: 'UnsupportedMediaType' });
  });

  it('refuses a body over BATCH_MAX_BYTES with 413 before reading it', async () => {
    const small = await startHarness({ worker: false, env: { BATCH_MAX_BYTES: '100' } });
    try {
      const response = await small.api('/api/v2/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body: 'x'.repeat(1000),
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ code: 'PayloadTooLarge' });
    } finally {
      await small.close();
    }
  });

  it('refuses a batch UUID that completed (409) and a body that is already live under another id', async () => {
    const uuid = randomUUID();
    const xml = batchXml([create('a', 'Jan Amos Komenský')], { uuid });
    await submit(xml);
    expect((await finished(uuid)).status).toBe('COMPLETED');
    const again = await post(xml);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'BatchAlreadyExists' });
    const sameUuidOtherBody = await post(batchXml([create('a', 'Someone Else')], { uuid }));
    expect(sameUuidOtherBody.status).toBe(409);
  });

  it('answers 409 for the result of a batch that has not finished, which stays ACCEPTED without a worker', async () => {
    const idle = await startHarness({ worker: false });
    try {
      const response = await idle.api('/api/v2/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('a', 'Čekající')]),
      });
      const updateRequestId = (await response.json()) as string;
      expect(await (await idle.api(`/api/v2/batches/${updateRequestId}/status`)).json()).toStrictEqual({ state: 'PENDING', progress: 0 });
      const status = (await (await idle.api(`/api/v2/batches/${updateRequestId}/detail`)).json()) as Status;
      expect(status).toMatchObject({ state: 'PENDING', status: 'ACCEPTED', changesTotal: 1, changesApplied: 0, finishedAt: null });
      const early = await idle.api(`/api/v2/batches/${updateRequestId}/result`);
      expect(early.status).toBe(409);
      expect(await early.json()).toMatchObject({ code: 'BatchNotFinished' });
      await idle.temporal.workflow.getHandle(updateRequestId).terminate('test cleanup');
    } finally {
      await idle.close();
    }
  });

  it('fails a batch with errors and writes nothing: FINISHED (a verdict), the result a failure', async () => {
    const uuid = randomUUID();
    await submit(
      batchXml([create('ok', 'Platný'), update('bad', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { uuid }),
    );
    expect(await finished(uuid)).toMatchObject({ state: 'FINISHED', status: 'FAILED' });
    const xml = await result(uuid);
    expect(xml).toContain('batchChangeFailure');
    expect(xml).toContain('UnknownEntity');
    expect(xml).not.toContain('forceKey');
    expect(await harness.sql('select 1 from transaction where batch_id = $1', [uuid])).toHaveLength(0);
    expect(await harness.sql('select 1 from revision where batch_id = $1', [uuid])).toHaveLength(0);
  });

  it('fails on warnings with a forceKey; the same batch with that key writes; a wrong key fails again', async () => {
    const entityType = `T-${randomUUID()}`;
    const first = await submit(batchXml([create('a', 'Josef Novák', { entityType })]));
    expect((await finished(first)).status).toBe('COMPLETED');

    const uuid = randomUUID();
    const xml = batchXml([create('b', 'Josef Novák', { entityType })], { uuid });
    await submit(xml);
    expect((await finished(uuid)).status).toBe('FAILED');
    const failure = await result(uuid);
    expect(failure).toContain('PreferredNameExists');
    const forceKey = /<forceKey>([^<]+)<\/forceKey>/.exec(failure)?.[1];
    expect(forceKey).toBeTruthy();

    await submit(xml, `?forceKey=${encodeURIComponent('not-the-key')}`);
    expect((await finished(uuid)).status).toBe('FAILED');
    expect(await result(uuid)).toContain('InvalidForceKey');

    await submit(xml, `?forceKey=${encodeURIComponent(forceKey!)}`);
    expect((await finished(uuid)).status).toBe('COMPLETED');
    const names = await harness.sql<{ n: string }>('select count(*) as n from entity where entity_type = $1', [entityType]);
    expect(Number(names[0]!.n)).toBe(2);
  });

  it('refuses a forceKey holding a control character with 400, before storing anything', async () => {
    const uuid = randomUUID();
    const xml = batchXml([create('c', 'Karel Hynek Mácha', { entityType: `T-${randomUUID()}` })], { uuid });
    for (const key of ['a\u0000b', 'a\nb']) {
      const refused = await post(xml, `?forceKey=${encodeURIComponent(key)}`, 'write');
      expect(refused.status, key).toBe(400);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(await harness.sql('select id from batch where id = $1', [uuid])).toEqual([]);
  });

  it('forces as the real client does: same XML and id with force=true&forceKey, no force permission needed, PENDING at once', async () => {
    const entityType = `T-${randomUUID()}`;
    await finished(await submit(batchXml([create('a', 'Eliška Krásnohorská', { entityType })])));
    const uuid = randomUUID();
    const xml = batchXml([create('b', 'Eliška Krásnohorská', { entityType })], { uuid });
    await submit(xml);
    expect(await finished(uuid)).toMatchObject({ state: 'FINISHED', status: 'FAILED' });
    const forceKey = /<forceKey>([^<]+)<\/forceKey>/.exec(await result(uuid))![1]!;

    const wrongKey = await post(xml, `?force=true&forceKey=${encodeURIComponent('not-the-key')}`, 'write');
    expect(wrongKey.status).toBe(403);
    const forced = await post(xml, `?force=true&forceKey=${encodeURIComponent(forceKey)}`, 'write');
    expect(forced.status).toBe(200);
    expect(await forced.json()).toBe(uuid);
    // Never the old FINISHED-with-failure: the revived batch is PENDING (or already further along, never FAILED).
    const right = (await (await harness.api(`/api/v2/batches/${uuid}/detail`)).json()) as Status;
    expect(['ACCEPTED', 'PROCESSING', 'COMPLETED']).toContain(right.status);
    expect(await finished(uuid)).toMatchObject({ state: 'FINISHED', status: 'COMPLETED' });
    const names = await harness.sql<{ n: string }>('select count(*) as n from entity where entity_type = $1', [entityType]);
    expect(Number(names[0]!.n)).toBe(2);
  });

  describe("a batch sent again while a run of it is still open (as between a failure's commit and its workflow's close)", () => {
    /** A failed batch, and a run under its id that no worker picks up: the run "still closing". */
    async function failedWithOpenRun(): Promise<{ uuid: string; xml: string; open: WorkflowHandle }> {
      const uuid = randomUUID();
      const xml = batchXml([update('bad', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { uuid });
      await submit(xml);
      expect((await finished(uuid)).status).toBe('FAILED');
      await harness.temporal.workflow.getHandle(uuid).result();
      const started = await harness.temporal.workflow.start(WORKFLOW_TYPES.batch, {
        workflowId: uuid,
        taskQueue: `nobody-${randomUUID()}`,
        args: [{ batchId: uuid }],
      });
      // This run itself, not whatever run of the id is the latest.
      return { uuid, xml, open: harness.temporal.workflow.getHandle(uuid, started.firstExecutionRunId) };
    }
    const terminatedBecause = async (run: WorkflowHandle) =>
      (await run.fetchHistory()).events?.find((event) => event.workflowExecutionTerminatedEventAttributes)
        ?.workflowExecutionTerminatedEventAttributes?.reason;

    it('waits for that run to close by itself, rather than terminating it mid-task, then runs the batch again', async () => {
      const { uuid, xml, open } = await failedWithOpenRun();
      // The submission may answer only after the run has closed: after this timer, not before it.
      let closing = false;
      setTimeout(() => {
        closing = true;
        void open.terminate('test: the run closes by itself');
      }, 500);
      expect(await submit(xml)).toBe(uuid);
      expect(closing).toBe(true);
      expect(await terminatedBecause(open)).toBe('test: the run closes by itself');
      expect(await finished(uuid)).toMatchObject({ status: 'FAILED' });
      expect((await harness.temporal.workflow.getHandle(uuid).describe()).runId).not.toBe((await open.describe()).runId);
    });

    it('replaces a run that does not close within the grace', async () => {
      const { uuid, xml, open } = await failedWithOpenRun();
      expect(await submit(xml)).toBe(uuid);
      expect((await open.describe()).status.name).toBe('TERMINATED');
      expect(await terminatedBecause(open)).not.toBe('test: the run closes by itself');
      expect(await finished(uuid)).toMatchObject({ status: 'FAILED' });
    });
  });

  it('writes despite warnings with force=true only for a principal holding the force permission', async () => {
    const entityType = `T-${randomUUID()}`;
    await finished(await submit(batchXml([create('a', 'Marie Dvořáková', { entityType })])));
    const xml = batchXml([create('b', 'Marie Dvořáková', { entityType })]);
    const denied = await post(xml, '?force=true', 'write');
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ code: 'Forbidden' });
    const allowed = await post(xml, '?force=true', 'force');
    expect(allowed.status).toBe(200);
    const updateRequestId = (await allowed.json()) as string;
    expect((await finished(updateRequestId)).status).toBe('COMPLETED');
  });

  it('runs a test batch synchronously and leaves no trace', async () => {
    const entityType = `T-${randomUUID()}`;
    const uuid = randomUUID();
    const [before] = await harness.sql<{ last_value: string }>('select last_value from entity_id_seq');
    const response = await harness.api('/api/v2/batches/test', {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: batchXml([create('a', 'Zkušební', { entityType })], { uuid }),
    });
    expect(response.status).toBe(200);
    const xml = await response.text();
    expect(xml).toContain('batchChangeSuccess');
    expect(await harness.sql('select 1 from batch where id = $1', [uuid])).toHaveLength(0);
    expect(await harness.sql('select 1 from entity where entity_type = $1', [entityType])).toHaveLength(0);
    const [after] = await harness.sql<{ last_value: string }>('select last_value from entity_id_seq');
    expect(after!.last_value).toBe(before!.last_value);
    // The test batch left nothing that would stop the real one.
    await submit(batchXml([create('a', 'Zkušební', { entityType })], { uuid }));
    expect((await finished(uuid)).status).toBe('COMPLETED');
  });

  it('reports errors from a test batch and refuses one with too many changes (422)', async () => {
    const failing = await harness.api('/api/v2/batches/test', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([update('x', 999_999_998, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])]),
    });
    expect(failing.status).toBe(200);
    expect(await failing.text()).toContain('UnknownEntity');
    const tooMany = await harness.api('/api/v2/batches/test', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', 'A'), create('b', 'B'), create('c', 'C'), create('d', 'D')]),
    });
    expect(tooMany.status).toBe(422);
    expect(await tooMany.json()).toMatchObject({ code: 'TooManyChanges' });
  });

  it('serialises concurrent batches on one entity: one per rev succeeds, the rest are stale, the history is one chain', async () => {
    const { entityId, rev } = await createOne('Souběžný Záznam');
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        submit(batchXml([update(`u${index}`, entityId, rev, [{ op: 'setEntityType', entityType: `TYPE-${index}` }])])),
      ),
    );
    const statuses = await Promise.all(ids.map(finished));
    expect(statuses.filter((status) => status.status === 'COMPLETED')).toHaveLength(1);
    const stale = await Promise.all(ids.filter((_, index) => statuses[index]!.status === 'FAILED').map(result));
    expect(stale).toHaveLength(19);
    for (const xml of stale) expect(xml).toContain('StaleRevision');
    const chain = await harness.sql<{ rev: string; prev_rev: string | null }>(
      'select rev, prev_rev from revision where entity_id = $1 order by seq',
      [entityId],
    );
    expect(chain).toHaveLength(2);
    expect(chain[1]!.prev_rev).toBe(chain[0]!.rev);
  });

  it('retries an apply that failed after writing rows: the batch completes exactly once', async () => {
    const uuid = randomUUID();
    failNextApply.add(uuid);
    const entityType = `T-${randomUUID()}`;
    await submit(batchXml([create('a', 'Opakovaný A', { entityType }), create('b', 'Opakovaný B', { entityType })], { uuid }));
    expect((await finished(uuid)).status).toBe('COMPLETED');
    expect(injectedFaults).toBeGreaterThanOrEqual(1);
    expect(await harness.sql('select 1 from transaction where batch_id = $1', [uuid])).toHaveLength(1);
    expect(await harness.sql('select 1 from entity where entity_type = $1', [entityType])).toHaveLength(2);
    expect(await harness.sql('select 1 from revision where batch_id = $1', [uuid])).toHaveLength(2);
  });

  it('still answers status and result from the database when the workflow history is gone', async () => {
    const uuid = await submit(batchXml([create('a', 'Trvalý Stav')]));
    expect((await finished(uuid)).status).toBe('COMPLETED');
    // Deleting the execution stands in for the namespace retention having passed.
    await harness.temporal.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: uuid } });
    expect(await (await harness.api(`/api/v2/batches/${uuid}/status`)).json()).toStrictEqual({ state: 'FINISHED', progress: 100 });
    expect(((await (await harness.api(`/api/v2/batches/${uuid}/detail`)).json()) as Status).status).toBe('COMPLETED');
    expect(await result(uuid)).toContain('batchChangeSuccess');
  });
});
