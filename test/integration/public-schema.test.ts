// Every kind of XML document the service emits, v2 and v1, checked against
// the real registry's public XSD of its version (read from ../shared/reference
// at test time): the real clients bind these documents with JAXB.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeCommand, Part, XmlVersion } from '../../domain/model.ts';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, namePart, SENDER, update } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { eventually } from '../support/poll.ts';
import { PUBLIC_SCHEMAS_PRESENT, publicSchemaErrors } from '../support/public-schemas.ts';

/** A record with every item kind, extension items, a relation to another new record, and a second name. */
function richParts(): Part[] {
  const body = randomUUID();
  return [
    namePart('Dvořák', {
      items: [
        { kind: 'string', type: 'NM_MAIN', value: 'Dvořák' },
        { kind: 'string', type: 'NM_MINOR', value: 'Antonín' },
        { kind: 'enum', type: 'NM_TYPE', spec: 'NT_ACTUAL' },
        {
          kind: 'unitDate',
          type: 'NM_DATE',
          from: '1841-09-08T00:00:00',
          to: '1904-05-01T23:59:59',
          format: 'D-D',
          fromEstimate: true,
          toEstimate: false,
        },
      ],
    }),
    {
      partUuid: body,
      type: 'PT_BODY',
      items: [
        { kind: 'string', type: 'BRIEF_DESC', value: 'skladatel & dirigent <"Nový svět">' },
        { kind: 'binary', type: 'PHOTO', base64: 'iVBORw0KGgo=' },
        { kind: 'boolean', type: 'IS_ALIVE', value: false },
        { kind: 'int', type: 'OPUS_COUNT', value: '115' },
        { kind: 'link', type: 'SOURCE_LINK', uuid: randomUUID(), url: 'https://example.org/dvorak?a=1&b=2', name: 'Životopis' },
      ],
      extensionItems: [{ kind: 'string', type: 'NOTE', value: 'poznámka\nna dvou řádcích' }],
    },
    {
      partUuid: randomUUID(),
      type: 'PT_REL',
      parent: body,
      items: [{ kind: 'entityRef', type: 'REL_ENTITY', spec: 'RT_PLACE', target: { kind: 'local', localId: 'place' } }],
    },
    namePart('Dvořák, Antonín Leopold'),
  ];
}

describe.skipIf(!PUBLIC_SCHEMAS_PRESENT)('every emitted document validates against the public XSD of its version', () => {
  let harness: Harness;
  const entityType = `T-${randomUUID()}`;
  let person: { entityId: number; entityUuid: string; rev: string };
  let firstTransaction: string;
  let lastTransaction: string;

  beforeAll(async () => {
    harness = await startHarness();
    const first = await applyBatch(
      harness,
      batchXml([
        create('person', 'Dvořák', { entityType, parts: richParts() }),
        create('place', 'Nelahozeves', { entityType: `${entityType}-GEO` }),
      ]),
    );
    person = first.revisions.get('person')!;
    firstTransaction = first.transaction;
    const changes: ChangeCommand[] = [
      update('person', person.entityId, person.rev, [
        { op: 'addParticipant', participant: { role: 'APPROVER', lastChange: '2026-11-23T16:03:02.5+01:00', user: SENDER } },
        { op: 'setState', state: 'ERS_APPROVED' },
        { op: 'addIssue', issue: { uuid: randomUUID(), severity: 'WARNING', issueCode: 'CHECK', message: 'zkontrolovat' } },
      ]),
    ];
    lastTransaction = (await applyBatch(harness, batchXml(changes))).transaction;
  });

  afterAll(async () => {
    await harness?.close();
  });

  async function expectValid(xml: string, version: XmlVersion, what: string): Promise<void> {
    expect(await publicSchemaErrors(xml, version), `${what}: ${xml.slice(0, 400)}`).toEqual([]);
  }

  async function get(path: string): Promise<string> {
    const response = await harness.api(path);
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    return response.text();
  }

  async function post(path: string, body: string, contentType: string, as: 'admin' | 'export' = 'admin'): Promise<string> {
    const response = await harness.api(path, { method: 'POST', headers: { 'content-type': contentType }, body, as });
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    return response.text();
  }

  it('v2 entity, entity in a revision, updates and updatesFrom', async () => {
    const entity = await get(`/api/v2/entities/${person.entityId}`);
    expect(entity).toContain('<parts>');
    await expectValid(entity, 'v2', 'entity');
    await expectValid(await get(`/api/v2/entities/${person.entityUuid}/revision/${person.rev}`), 'v2', 'entity revision');
    await expectValid(
      await get(`/api/v2/updates?fromTransId=${firstTransaction}&toTransId=${lastTransaction}&page=1&pageSize=10`),
      'v2',
      'updates',
    );
    await expectValid(await get(`/api/v2/updates/from/${firstTransaction}`), 'v2', 'updatesFrom');
    await expectValid(await get(`/api/v2/updates/from/${GENESIS_TRANSACTION_ID}`), 'v2', 'updatesFrom genesis');
  });

  it('v2 batch results: success, failure with errors, failure with warnings and forceKey, test batch', async () => {
    const success = await applyBatch(harness, batchXml([create('s', 'Úspěšný Záznam', { entityType })]));
    await expectValid(success.result, 'v2', 'batchChangeSuccess');

    const failing = randomUUID();
    await post(
      '/api/v2/batches',
      batchXml([update('bad', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { uuid: failing }),
      'application/xml',
    );
    await batchEnded(harness, failing);
    await expectValid(await get(`/api/v2/batches/${failing}/result`), 'v2', 'batchChangeFailure (errors)');

    const warned = randomUUID();
    await post('/api/v2/batches', batchXml([create('w', 'Úspěšný Záznam', { entityType })], { uuid: warned }), 'application/xml');
    await batchEnded(harness, warned);
    const failure = await get(`/api/v2/batches/${warned}/result`);
    expect(failure).toContain('<forceKey>');
    await expectValid(failure, 'v2', 'batchChangeFailure (warnings)');

    await expectValid(
      await post('/api/v2/batches/test', batchXml([create('t', 'Zkušební', { entityType })]), 'application/xml'),
      'v2',
      'test batch result',
    );
  });

  it('v2 exports: snapshot and revisions files', async () => {
    for (const [kind, query] of [
      ['snapshots', ''],
      ['revisions', `?fromTransId=${GENESIS_TRANSACTION_ID}`],
    ] as const) {
      const id = await post(`/api/v2/export/${kind}${query}`, JSON.stringify([String(person.entityId)]), 'application/json', 'export');
      await eventually(
        async () =>
          ((await (await harness.api(`/api/v2/export/status/${id}`)).json()) as { state: string }).state === 'FINISHED' || undefined,
      );
      const file = await (
        await harness.api(`/api/v2/export/download/${id}`, { as: 'export', headers: { 'accept-encoding': 'identity' } })
      ).text();
      await expectValid(file, 'v2', `${kind} export`);
    }
  });

  it('v1 ent, bus, bue, ups, upsf and the synchronous exports', async () => {
    await expectValid(await get(`/api/v1/entities/${person.entityId}`), 'v1', 'ent');
    const bus = await post('/api/v1/batches', batchXml([create('a', 'Jan Neruda', { entityType })], { version: 'v1' }), 'application/xml');
    await expectValid(bus, 'v1', 'bus');
    const bue = await post(
      '/api/v1/batches',
      batchXml([update('x', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { version: 'v1' }),
      'application/xml',
    );
    expect(bue).toContain('<bue');
    await expectValid(bue, 'v1', 'bue');
    await expectValid(
      await get(`/api/v1/updates?fromTransId=${firstTransaction}&toTransId=${lastTransaction}&page=1&pageSize=10`),
      'v1',
      'ups',
    );
    await expectValid(await get(`/api/v1/updates/from/${firstTransaction}`), 'v1', 'upsf');
    await expectValid(
      await post('/api/v1/export/snapshots', JSON.stringify([person.entityId]), 'application/json', 'export'),
      'v1',
      'ents',
    );
    await expectValid(
      await post(
        `/api/v1/export/revisions?fromTransId=${firstTransaction}`,
        JSON.stringify([person.entityId]),
        'application/json',
        'export',
      ),
      'v1',
      'v1 revisions export',
    );
  });
});
