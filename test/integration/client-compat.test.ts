// The real registry's client (ELZA, generated from the real v2 OpenAPI) through
// its whole cycle against this service: every JSON answer is read with the
// real models (an unknown field or enum value fails), every XML answer and
// every batch it sends is checked against the public XSD.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeCommand } from '../../domain/model.ts';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { batchXml, create, namePart, SENDER } from '../support/batches.ts';
import { startHarness, temporalCoreWarnings, TEST_KEYS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';
import { elzaHeaders } from '../support/nda-signer.ts';
import { PUBLIC_SCHEMAS_PRESENT, publicSchemaErrors } from '../support/public-schemas.ts';
import { REAL_OPENAPI_PRESENT, realModelErrors } from '../support/real-client.ts';

type Principal = keyof typeof TEST_KEYS;

describe.skipIf(!PUBLIC_SCHEMAS_PRESENT || !REAL_OPENAPI_PRESENT)('the real client, unchanged', () => {
  let harness: Harness;
  const entityType = `T-${randomUUID()}`;
  const surname = `Klientová${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
    // A batch forced the moment its failure is read ends its old run cleanly: no "Workflow task not found" from the SDK.
    expect(temporalCoreWarnings()).toEqual([]);
  });

  /**
   * As the generated client calls: signed with an API key (HMAC, as ELZA's
   * interceptor signs), Accept: application/json to JSON and XML operations
   * alike. `at` is the client's clock (X-NDA-Date): the signature covers no
   * body, so writes to one URL in one second carry one signature.
   */
  async function call(
    method: string,
    path: string,
    options: { body?: string; type?: string; as?: Principal; at?: Date } = {},
  ): Promise<Response> {
    const pathAndQuery = `/api/v2${path}`;
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...elzaHeaders(TEST_KEYS[options.as ?? 'write'], { host: '127.0.0.1', method, pathAndQuery, at: options.at }),
    };
    if (options.type) headers['content-type'] = options.type;
    return harness.api(pathAndQuery, { method, headers, body: options.body, as: null });
  }

  async function json<T>(response: Response, model: string): Promise<T> {
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const value = JSON.parse(text) as T;
    expect(realModelErrors(model, value), text).toEqual([]);
    return value;
  }

  async function xml(response: Response, root: string): Promise<string> {
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).toBe(200);
    expect(text).toMatch(new RegExp(`<${root}[\\s>]`));
    expect(await publicSchemaErrors(text, 'v2'), text.slice(0, 300)).toEqual([]);
    return text;
  }

  async function send(body: string, query = '', as: Principal = 'write', at?: Date): Promise<string> {
    expect(await publicSchemaErrors(body, 'v2'), 'the batch the client sends is valid under the public XSD').toEqual([]);
    const response = await call('POST', `/batches${query}`, { body, type: 'text/xml', as, at });
    expect(response.headers.get('content-type')).toContain('application/json');
    return json<string>(response, 'UpdateRequestId');
  }

  async function finished(id: string): Promise<void> {
    const states: string[] = [];
    await eventually(async () => {
      const status = await json<{ state: string; progress?: number }>(await call('GET', `/batches/${id}/status`), 'BatchUpdateStatus');
      if (states.at(-1) !== status.state) states.push(status.state);
      return status.state === 'FINISHED' || status.state === 'ERROR' ? status : undefined;
    });
    expect(states.at(-1)).toBe('FINISHED');
  }

  const attribute = (text: string, name: string) => new RegExp(`\\b${name}="([^"]+)"`).exec(text)![1]!;
  const element = (text: string, name: string) => new RegExp(`<${name}>([^<]+)</${name}>`).exec(text)![1]!;

  it('creates, reads, updates, forces, searches, syncs from genesis and exports', async () => {
    // 1. A create as the client's JAXB writes it: default namespace, <parts>, sender, setState, addParticipant.
    const batchId = randomUUID();
    const commands: ChangeCommand[] = [
      create('p1', `${surname} Anna`, { entityType, parts: [namePart(`${surname} Anna`)] }),
      create('p2', `${surname} Berta`, { entityType, parts: [namePart(`${surname} Berta`)] }),
      { kind: 'update', entity: { kind: 'local', localId: 'p1' }, changes: [{ op: 'setState', state: 'ERS_APPROVED' }] },
      {
        kind: 'update',
        entity: { kind: 'local', localId: 'p1' },
        changes: [{ op: 'addParticipant', participant: { role: 'EDITOR', lastChange: '2026-11-23T16:03:02Z', user: SENDER } }],
      },
    ];
    const created = batchXml(commands, { uuid: batchId });
    expect(created).toContain('<parts>');
    expect(await send(created)).toBe(batchId);
    await finished(batchId);
    const success = await xml(await call('GET', `/batches/${batchId}/result`), 'batchChangeSuccess');
    const entityId = Number(attribute(success, 'entityId'));
    const entityUuid = attribute(success, 'entityUuid');

    // 1b. Two different batches under one key in the same second, as the client's export queue posts the
    //     next item at once (or two archivists save at once): one signature, both written.
    const second = new Date();
    const queued = [randomUUID(), randomUUID()];
    const sent = await Promise.all(
      queued.map((uuid, index) =>
        send(batchXml([create('q', `Fronta ${index} ${randomUUID()}`, { entityType: `${entityType}-Q` })], { uuid }), '', 'write', second),
      ),
    );
    expect(sent).toEqual(queued);
    for (const uuid of queued) {
      await finished(uuid);
      await xml(await call('GET', `/batches/${uuid}/result`), 'batchChangeSuccess');
    }

    // 2. Read by number and by UUID; update with the rev it read.
    const byNumber = await xml(await call('GET', `/entities/${entityId}`), 'entity');
    expect(byNumber).toContain('state="ERS_APPROVED"');
    expect(byNumber).toMatch(/<createdAt>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/createdAt>/);
    const byUuid = await xml(await call('GET', `/entities/${entityUuid}`), 'entity');
    const rev = element(byUuid, 'rev');
    const updateId = randomUUID();
    await send(
      batchXml(
        [
          {
            kind: 'update',
            entity: { kind: 'stored', localId: 'u', entityId, rev },
            changes: [{ op: 'setEntityType', entityType: `${entityType}-B` }],
          },
        ],
        { uuid: updateId },
      ),
    );
    await finished(updateId);
    await xml(await call('GET', `/batches/${updateId}/result`), 'batchChangeSuccess');

    // 3. A batch that only warnings stop; the same XML under the same id with force=true and the key writes it,
    //    for a client without the force permission.
    const warnedId = randomUUID();
    const warned = batchXml([create('w', `${surname} Berta`, { entityType })], { uuid: warnedId });
    await send(warned);
    await finished(warnedId);
    const failure = await xml(await call('GET', `/batches/${warnedId}/result`), 'batchChangeFailure');
    const forceKey = element(failure, 'forceKey');
    expect(await send(warned, `?force=true&forceKey=${encodeURIComponent(forceKey)}`)).toBe(warnedId);
    const right = await json<{ state: string }>(await call('GET', `/batches/${warnedId}/status`), 'BatchUpdateStatus');
    expect(['PENDING', 'PROCESSING', 'FINISHED']).toContain(right.state);
    await finished(warnedId);
    await xml(await call('GET', `/batches/${warnedId}/result`), 'batchChangeSuccess');

    // 4. Search, pages 1 and 2 of one record each, with the real QueryParamsDef.
    const query = JSON.stringify({
      state: ['RS_NEW', 'RS_APPROVED'],
      cond: { condType: 'INDEX', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: surname.toLowerCase() },
    });
    const page1 = await xml(
      await call('POST', '/search?page=1&pageSize=1&searchType=EXACT', { body: query, type: 'application/json' }),
      'queryResult',
    );
    const page2 = await xml(
      await call('POST', '/search?page=2&pageSize=1&searchType=EXACT', { body: query, type: 'application/json' }),
      'queryResult',
    );
    expect(element(page1, 'count')).toBe('3');
    expect(attribute(page1, 'entityId')).not.toBe(attribute(page2, 'entityId'));

    // 5. Sync from the beginning of history.
    const from = await xml(await call('GET', `/updates/from/${GENESIS_TRANSACTION_ID}`), 'updatesFrom');
    const to = element(from, 'to');
    // Page by page, as the client does: the run's other files may have written more than a page before this one.
    let found = false;
    for (let page = 1; !found; page += 1) {
      const updates = await xml(
        await call('GET', `/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${to}&page=${page}&pageSize=50000`),
        'updates',
      );
      found = updates.includes(`entityUuid="${entityUuid}"`);
      if (!found) expect(updates.split('<revInfo ').length - 1, `page ${page} is full, or the record was on it`).toBe(50_000);
    }

    // 6. Exports: start with a bare array of refs, poll, download.
    for (const [kind, suffix, root] of [
      ['snapshots', '', 'entities'],
      ['revisions', `?fromTransId=${GENESIS_TRANSACTION_ID}`, 'entityRecordRevisions'],
    ] as const) {
      const started = await call('POST', `/export/${kind}${suffix}`, {
        body: JSON.stringify([String(entityId), entityUuid]),
        type: 'application/json',
        as: 'export',
      });
      expect(started.status).toBe(200);
      expect(started.headers.get('content-type')).toContain('text/plain');
      const exportId = await started.text();
      expect(realModelErrors('ExportRequestId', exportId)).toEqual([]);
      await eventually(async () => {
        const status = await json<{ state: string }>(
          await call('GET', `/export/status/${exportId}`, { as: 'export' }),
          'ExportRequestStatus',
        );
        return status.state === 'FINISHED' ? status : undefined;
      });
      await xml(await call('GET', `/export/download/${exportId}`, { as: 'export' }), root);
    }
  });

  it('answers failures as the real BaseException and ErrorTransactionNotFound', async () => {
    const missing = randomUUID();
    const response = await call('GET', `/updates/from/${missing}`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: expect.any(String),
      code: 'TransactionNotFound',
      message: expect.any(String),
      transactionId: missing,
      properties: { transactionId: missing },
    });
    const unknownEntity = await call('GET', '/entities/not-an-entity');
    expect(unknownEntity.status).toBe(404);
    expect(await unknownEntity.json()).toMatchObject({ code: 'EntityNotFound', message: expect.any(String) });
  });
});
