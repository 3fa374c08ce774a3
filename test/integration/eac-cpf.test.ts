// EAC-CPF 2.0 as the service serves it: GET of a v2 record whose Accept
// asks for application/eac-cpf+xml (application/xml and no Accept keep the
// registry's own document), the link on each record page, and the snapshot
// export in format=eac-cpf. Every document is checked against the official
// schema (read at test time; these checks are skipped loudly without it).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Part } from '../../domain/model.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, namePart, update } from '../support/batches.ts';
import { EAC_CPF_SCHEMA_PRESENT, eacCpfSchemaErrors, eacRecordsOf } from '../support/eac-cpf-schema.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { harvest, oaiGet } from '../support/oai.ts';
import { oaiSchemaErrors } from '../support/oai-schema.ts';
import { snapshotExportFile } from '../support/snapshot-export.ts';

const EAC = 'application/eac-cpf+xml';

interface Seeded {
  /** By local id: every type, every kind of part and item; `old` replaced by `karel`, `wrong` invalid. */
  ids: Map<string, number>;
}

function everyPart(marker: string, target: number): Part[] {
  const stored = { kind: 'stored' as const, ref: { entityId: target } };
  return [
    {
      partUuid: randomUUID(),
      type: 'PT_NAME',
      items: [
        { kind: 'string', type: 'NM_MAIN', value: `Čapek ${marker}` },
        { kind: 'string', type: 'NM_MINOR', value: 'Karel' },
        { kind: 'enum', type: 'NM_TYPE', spec: 'NT_ACTUAL' },
        { kind: 'unitDate', type: 'NM_DATE', from: '1890-01-09T00:00:00', to: '1938-12-25T23:59:59', fromEstimate: true },
      ],
    },
    namePart(`Dacier ${marker}`),
    {
      partUuid: randomUUID(),
      type: 'PT_BODY',
      items: [
        { kind: 'string', type: 'BRIEF_DESC', value: 'spisovatel & <dramatik>' },
        { kind: 'boolean', type: 'IS_ALIVE', value: false },
        { kind: 'int', type: 'OPUS_COUNT', value: '42' },
        { kind: 'binary', type: 'PHOTO', base64: 'iVBORw0KGgo=' },
        { kind: 'link', type: 'SOURCE_LINK', url: 'https://example.org/capek?a=1&b=2', name: 'Životopis' },
      ],
      extensionItems: [{ kind: 'string', type: 'NOTE', value: 'poznámka' }],
    },
    {
      partUuid: randomUUID(),
      type: 'PT_CRE',
      items: [
        { kind: 'unitDate', type: 'CRE_DATE', from: '1890-01-09T00:00:00', to: '1890-01-09T23:59:59' },
        { kind: 'entityRef', type: 'CRE_PLACE', target: stored },
      ],
    },
    {
      partUuid: randomUUID(),
      type: 'PT_EXT',
      items: [{ kind: 'unitDate', type: 'EXT_DATE', from: '1938-12-25T00:00:00', to: '1938-12-25T00:00:00' }],
    },
    {
      partUuid: randomUUID(),
      type: 'PT_EVENT',
      items: [
        { kind: 'string', type: 'EV_DESC', value: 'R.U.R.' },
        { kind: 'unitDate', type: 'EV_DATE', from: '1920-01-01T00:00:00', to: '1920-12-31T23:59:59' },
      ],
    },
    {
      partUuid: randomUUID(),
      type: 'PT_IDENT',
      items: [
        { kind: 'string', type: 'ID_ISNI', value: '0000 0001 2140 9531' },
        { kind: 'link', type: 'ID_LINK', spec: 'LT_WIKI', url: 'https://cs.wikipedia.org/wiki/Karel_%C4%8Capek' },
      ],
    },
    { partUuid: randomUUID(), type: 'PT_REL', items: [{ kind: 'entityRef', type: 'REL_ENTITY', spec: 'RT_MEMBER', target: stored }] },
  ];
}

async function seed(harness: Harness): Promise<Seeded> {
  const marker = `Eac${randomUUID().slice(0, 8)}`;
  const first = await applyBatch(
    harness,
    batchXml([
      create('club', `Klub ${marker}`, { entityType: 'PARTY_GROUP' }),
      create('family', `Rod ${marker}`, { entityType: 'FAMILY' }),
      create('place', `Malé Svatoňovice ${marker}`, { entityType: 'GEO' }),
      create('event', `Sjezd ${marker}`, { entityType: 'EVENT' }),
      create('old', `Starý ${marker}`, { entityType: 'PERSON' }),
      create('wrong', `Omyl ${marker}`, { entityType: 'PERSON_FICTIVE' }),
    ]),
  );
  const ids = new Map([...first.revisions].map(([localId, revision]) => [localId, revision.entityId]));
  const second = await applyBatch(
    harness,
    batchXml([create('karel', '', { entityType: 'PERSON', parts: everyPart(marker, ids.get('club')!) })]),
  );
  ids.set('karel', second.revisions.get('karel')!.entityId);
  const old = first.revisions.get('old')!;
  const wrong = first.revisions.get('wrong')!;
  await applyBatch(
    harness,
    batchXml([
      update('old', old.entityId, old.rev, [
        { op: 'setState', state: 'ERS_REPLACED', replacement: { kind: 'stored', ref: { entityId: ids.get('karel')! } } },
      ]),
      update('wrong', wrong.entityId, wrong.rev, [{ op: 'setState', state: 'ERS_INVALID' }]),
    ]),
  );
  return { ids };
}

describe('EAC-CPF 2.0 served', () => {
  let harness: Harness;
  let data: Seeded;
  /** Every EAC-CPF document the tests below were served, by where it came from: the last test validates them all. */
  const served: Array<{ from: string; xml: string }> = [];

  beforeAll(async () => {
    harness = await startHarness({ env: { RECORD_PAGES: 'public', OAI_PMH: 'public', ANONYMOUS_READ_RATE_LIMIT: '0' } });
    data = await seed(harness);
  }, 120_000);
  afterAll(() => harness?.close());

  it('answers GET with an EAC-CPF Accept in EAC-CPF, valid for every record, with its own ETag', async () => {
    for (const [localId, id] of data.ids) {
      const response = await harness.api(`/api/v2/entities/${id}`, { as: 'read', headers: { accept: EAC } });
      expect(response.status, localId).toBe(200);
      expect(response.headers.get('content-type')).toBe(EAC);
      expect(response.headers.get('vary')).toBe('Origin, Accept');
      const xml = await response.text();
      expect(xml).toContain('<eac xmlns="https://archivists.org/ns/eac/v2"');
      served.push({ from: `GET ${localId}`, xml });
      const etag = response.headers.get('etag')!;
      expect(etag).toMatch(/\.eac"$/);
      const again = await harness.api(`/api/v2/entities/${id}`, { as: 'read', headers: { accept: EAC, 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }
  });

  it('writes types, states and relations as the mapping says, relations to the record pages of this origin', async () => {
    const eac = async (localId: string) =>
      (
        await harness.api(`/api/v2/entities/${data.ids.get(localId)}`, { as: 'read', headers: { accept: `${EAC}, application/xml;q=0.5` } })
      ).text();
    const karel = await eac('karel');
    expect(karel).toContain('<entityType value="person"/>');
    expect(karel).toContain(`<targetEntity targetType="agent" valueURI="${harness.baseUrl}/global/${data.ids.get('club')}">`);
    expect(karel).toContain('<identityId localType="ID_ISNI">0000 0001 2140 9531</identityId>');
    expect(await eac('family')).toContain('<entityType value="family"/>');
    expect(await eac('place')).toContain('<otherEntityType><term>GEO</term></otherEntityType>');
    const old = await eac('old');
    expect(old).toContain('maintenanceStatus="deletedReplaced"');
    expect(old).toContain(`valueURI="${harness.baseUrl}/global/${data.ids.get('karel')}"`);
    expect(await eac('wrong')).toContain('maintenanceStatus="deleted"');
  });

  it("keeps the registry's document for no Accept, */*, application/xml and types it does not serve", async () => {
    const id = data.ids.get('karel');
    for (const accept of [undefined, '*/*', 'application/xml', 'text/html', `application/xml, ${EAC};q=0.5`]) {
      const response = await harness.api(`/api/v2/entities/${id}`, { as: 'read', headers: accept === undefined ? {} : { accept } });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get('content-type'), accept).toBe('application/xml');
      expect(await response.text()).toContain('<entity xmlns="http://cam.tacr.cz/2025"');
    }
  });

  it('answers a revision of a record in EAC-CPF too', async () => {
    const id = data.ids.get('old')!;
    const [first] = await harness.sql<{ uuid: string }>('select uuid from revision where entity_id = $1 order by seq limit 1', [id]);
    const response = await harness.api(`/api/v2/entities/${id}/revision/${first!.uuid}`, { as: 'read', headers: { accept: EAC } });
    expect(response.status).toBe(200);
    const xml = await response.text();
    expect(xml).toContain('maintenanceStatus="new"');
    served.push({ from: 'GET of a revision', xml });
  });

  it('links every record page to the record in EAC-CPF, which the page serves', async () => {
    const id = data.ids.get('karel');
    const page = await (await fetch(`${harness.baseUrl}/global/${id}`)).text();
    expect(page).toContain(`<a href="/global/${id}/eac-cpf" type="${EAC}">`);
    const response = await fetch(`${harness.baseUrl}/global/${id}/eac-cpf`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(EAC);
    served.push({ from: 'record page link', xml: await response.text() });
  });

  it('exports a snapshot in EAC-CPF, each record valid', async () => {
    const ids = [...data.ids.values()];
    const { file } = await snapshotExportFile(harness, ids, 'eac-cpf');
    expect(file.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<eacRecords>')).toBe(true);
    const records = eacRecordsOf(file);
    expect(records).toHaveLength(ids.length);
    for (const record of records) served.push({ from: 'export', xml: record });
    expect(file).toContain(`valueURI="${harness.baseUrl}/global/${data.ids.get('club')}"`);
  });

  it('refuses a format it does not have, and a format for a revisions export', async () => {
    for (const path of ['snapshots?format=marc', `revisions?fromTransId=${randomUUID()}&format=eac-cpf`]) {
      const response = await harness.api(`/api/v2/export/${path}`, {
        method: 'POST',
        as: 'export',
        headers: { 'content-type': 'application/json' },
        body: '[]',
      });
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('harvests every record over OAI-PMH in metadataPrefix eac-cpf, offered with the official namespace and schema', async () => {
    const formats = await oaiGet(harness.baseUrl, 'verb=ListMetadataFormats');
    expect(formats.text).toContain(
      '<metadataPrefix>eac-cpf</metadataPrefix><schema>https://eac.staatsbibliothek-berlin.de/schema/v2/eac.xsd</schema><metadataNamespace>https://archivists.org/ns/eac/v2</metadataNamespace>',
    );
    const harvested = await harvest(harness.baseUrl, 'verb=ListRecords&metadataPrefix=eac-cpf');
    for (const text of harvested.texts) expect(await oaiSchemaErrors(text)).toEqual([]);
    // Replaced and invalid records are OAI deleted headers; every other record carries its eac element.
    const live = harvested.items.filter((item) => !item.deleted);
    expect(live.length).toBeGreaterThanOrEqual(data.ids.size - 2);
    for (const item of live) {
      expect(item.metadata, item.identifier).toContain('<eac xmlns="https://archivists.org/ns/eac/v2"');
      served.push({ from: `OAI ${item.identifier}`, xml: item.metadata! });
    }
    // Relations link record pages under the service's public URL, as GET's do.
    const relation = `valueURI="${harness.baseUrl}/global/${data.ids.get('club')}"`;
    expect(live.some((item) => item.metadata!.includes(relation))).toBe(true);
  });

  // Last: it checks what the tests above were served. Without the schema it is reported skipped, never passed.
  it.skipIf(!EAC_CPF_SCHEMA_PRESENT)('every EAC-CPF document served validates against the official 2.0 schema', async () => {
    expect(served.length).toBeGreaterThan(2 * data.ids.size);
    for (const { from, xml } of served) expect({ from, errors: await eacCpfSchemaErrors(xml) }).toEqual({ from, errors: [] });
  });
});
