// The EAC-CPF 2.0 writer: every document it writes is valid against the
// official schema (read at test time, skipped loudly where absent), for
// records of every type and state, with every kind of part and item the
// examples and fixtures hold; and the mapping says what docs/overview.md says.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EAC_CPF, eacCpfCollection, eacCpfDocumentWriter, eacCpfWriter } from '../../domain/eac-cpf/writer.ts';
import { eacEntityType } from '../../domain/eac-cpf/entity-type.ts';
import { storedEacCpfElement, storedEacCpfFiller } from '../../domain/eac-cpf/stored.ts';
import type { EntityRecord, EntityState, Part } from '../../domain/model.ts';
import { BATCH_V2_COMMANDS } from '../fixtures/xml/batch-commands.ts';
import { oneChunk, readAll, sampleRecord, uuid } from '../fixtures/xml/support.ts';
import { EAC_CPF_SCHEMA_PRESENT, eacCpfSchemaErrors, eacRecordsOf } from '../support/eac-cpf-schema.ts';

const ORIGIN = 'https://registry.example.org';
const document = eacCpfDocumentWriter({ origin: ORIGIN, agencyName: 'Entity Records Service' });

function recordOf(n: number, entityType: string, parts: Part[], state: EntityState = 'ERS_APPROVED'): EntityRecord {
  return { ...sampleRecord(n), entityType, parts, state, ...(state === 'ERS_REPLACED' ? { replacedBy: { entityId: n + 100 } } : {}) };
}

/** Every part type, and every item kind in each, beyond what the fixtures hold. */
const EVERY_PART: Part[] = [
  {
    partUuid: uuid(1, 30),
    type: 'PT_NAME',
    items: [
      { kind: 'string', type: 'NM_MAIN', value: 'Karel IV.' },
      { kind: 'enum', type: 'NM_TYPE', spec: 'NT_ACTUAL' },
      { kind: 'int', type: 'NM_ORDER', value: '4' },
      { kind: 'unitDate', type: 'NM_DATE', from: '1346-07-11T00:00:00', to: '1378-11-29T23:59:59', fromEstimate: true },
    ],
  },
  { partUuid: uuid(1, 31), type: 'PT_NAME', items: [{ kind: 'enum', type: 'NM_TYPE', spec: 'NT_EMPTY' }] },
  {
    partUuid: uuid(1, 32),
    type: 'PT_CRE',
    items: [
      { kind: 'unitDate', type: 'CRE_DATE', from: '1316-05-14T00:00:00', to: '1316-05-14T23:59:59' },
      { kind: 'unitDate', type: 'CRE_DATE', from: '1316-05-14T00:00:00', to: '1316-05-14T00:00:00' },
      { kind: 'entityRef', type: 'CRE_PLACE', target: { kind: 'stored', ref: { entityId: 9, entityUuid: uuid(9) } } },
      { kind: 'string', type: 'CRE_NOTE', value: 'Praha' },
      { kind: 'enum', type: 'CRE_CLASS', spec: 'CLASS_BIRTH' },
      { kind: 'boolean', type: 'CRE_CERTAIN', value: true },
    ],
  },
  {
    partUuid: uuid(1, 33),
    type: 'PT_EXT',
    items: [
      { kind: 'unitDate', type: 'EXT_DATE', from: '1378-11-29T00:00:00', to: '1378-11-29T00:00:00', toEstimate: true },
      { kind: 'entityRef', type: 'EXT_PLACE', spec: 'RT_DEATH', target: { kind: 'stored', ref: { entityUuid: uuid(10) } } },
    ],
  },
  {
    partUuid: uuid(1, 34),
    type: 'PT_EVENT',
    items: [
      { kind: 'string', type: 'EV_DESC', value: 'korunovace' },
      { kind: 'string', type: 'EV_NOTE', value: 'v Římě' },
      { kind: 'unitDate', type: 'EV_DATE', from: '1355-04-05T00:00:00', to: '1355-04-05T23:59:59' },
      { kind: 'link', type: 'EV_LINK', url: 'https://example.org/korunovace' },
      { kind: 'int', type: 'EV_COUNT', value: '-2' },
    ],
  },
  { partUuid: uuid(1, 35), type: 'PT_EVENT', items: [{ kind: 'string', type: 'EV_DESC', value: 'studium (bez data)' }] },
  {
    partUuid: uuid(1, 36),
    type: 'PT_IDENT',
    items: [
      { kind: 'string', type: 'ID_ISNI', value: '0000 0001 2138 4321' },
      { kind: 'link', type: 'ID_LINK', spec: 'LT_WIKI', url: 'https://cs.wikipedia.org/wiki/Karel_IV.' },
      { kind: 'int', type: 'ID_NUMBER', value: '123' },
      { kind: 'unitDate', type: 'ID_VALID', from: '2000-01-01T00:00:00', to: '2001-01-01T00:00:00' },
      { kind: 'binary', type: 'ID_SCAN', base64: 'AAEC' },
    ],
  },
  {
    partUuid: uuid(1, 37),
    type: 'PT_REL',
    items: [
      { kind: 'entityRef', type: 'REL_ENTITY', spec: 'RT_FATHER', target: { kind: 'stored', ref: { entityId: 11 } } },
      { kind: 'unitDate', type: 'REL_DATE', from: '1316-05-14T00:00:00', to: '1346-08-26T00:00:00' },
      { kind: 'unitDate', type: 'REL_END', from: '1346-08-26T00:00:00', to: '1346-08-26T00:00:00' },
      { kind: 'string', type: 'REL_NOTE', value: 'Jan Lucemburský' },
      { kind: 'entityRef', type: 'REL_ENTITY', target: { kind: 'local', localId: 'n2' } },
    ],
  },
  { partUuid: uuid(1, 38), type: 'PT_BODY', items: [{ kind: 'string', type: 'BRIEF_DESC', value: 'druhý popis' }] },
];

/** The parts of every create and every new part of the v2 examples (their local references are left as they are: no target). */
async function exampleParts(): Promise<Array<{ name: string; entityType: string; parts: Part[] }>> {
  const folder = new URL('../../examples/v2/', import.meta.url);
  const found: Array<{ name: string; entityType: string; parts: Part[] }> = [];
  for (const file of readdirSync(folder).sort()) {
    const { commands } = await readAll(oneChunk(readFileSync(new URL(file, folder), 'utf8')));
    for (const command of commands) {
      if (command.kind === 'create')
        found.push({ name: `${file} ${command.localId}`, entityType: command.entityType, parts: command.parts });
      else {
        const parts = command.changes.flatMap((change) => (change.op === 'newPart' ? [change.part] : []));
        if (parts.length > 0) found.push({ name: `${file} update`, entityType: 'PERSON', parts });
      }
    }
  }
  return found;
}

const TYPES = ['PERSON', 'PERSON_FICTIVE', 'FAMILY', 'DYNASTY', 'PARTY_GROUP', 'CORPORATION', 'GEO', 'EVENT', 'ARTWORK'];
const STATES: EntityState[] = ['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED'];

async function everyRecord(): Promise<Array<[string, EntityRecord]>> {
  const records: Array<[string, EntityRecord]> = [['sample record', sampleRecord(5)]];
  for (const [index, type] of TYPES.entries()) records.push([`type ${type}`, recordOf(20 + index, type, EVERY_PART)]);
  for (const [index, state] of STATES.entries()) records.push([`state ${state}`, recordOf(40 + index, 'PARTY_GROUP', EVERY_PART, state)]);
  for (const [index, command] of BATCH_V2_COMMANDS.entries()) {
    if (command.kind === 'create') records.push([`fixture ${command.localId}`, recordOf(60 + index, command.entityType, command.parts)]);
  }
  for (const [index, example] of (await exampleParts()).entries())
    records.push([example.name, recordOf(80 + index, example.entityType, example.parts)]);
  const first = sampleRecord(6);
  records.push([
    'first revision, no user, no participants, no parts',
    { ...first, state: 'ERS_NEW', parts: [], revision: { ...first.revision, prevRev: undefined, user: undefined, participants: [] } },
  ]);
  return records;
}

describe.skipIf(!EAC_CPF_SCHEMA_PRESENT)('EAC-CPF 2.0 documents validate against the official schema', () => {
  it('for records of every type and state, with every kind of part and item', async () => {
    const records = await everyRecord();
    expect(records.length).toBeGreaterThan(20);
    for (const [name, record] of records) {
      const xml = document(record);
      expect({ name, errors: await eacCpfSchemaErrors(xml) }).toEqual({ name, errors: [] });
    }
  });

  it("a record's element alone (OAI-PMH metadata) is a valid document, naming its namespace and schema", async () => {
    const element = eacCpfWriter({ origin: ORIGIN, agencyName: 'Registry' })(sampleRecord(9));
    expect(element.startsWith(`<eac xmlns="${EAC_CPF.namespace}"`)).toBe(true);
    expect(element).toContain(`xsi:schemaLocation="${EAC_CPF.namespace} ${EAC_CPF.schema}"`);
    expect(await eacCpfSchemaErrors(element)).toEqual([]);
  });

  it('each record of a collection (the export file) is a valid document', async () => {
    const records = (await everyRecord()).map(([, record]) => record);
    const collection = eacCpfCollection({ origin: undefined, agencyName: 'Registry' });
    const file = collection.opening + records.map(collection.element).join('') + collection.closing;
    const elements = eacRecordsOf(file);
    expect(elements).toHaveLength(records.length);
    for (const element of elements) expect(await eacCpfSchemaErrors(element)).toEqual([]);
  });
});

describe('the EAC-CPF mapping', () => {
  it('makes persons and families of their codes and every other type a corporate body, keeping the code', () => {
    expect(TYPES.map(eacEntityType)).toEqual([
      'person',
      'person',
      'family',
      'family',
      'corporateBody',
      'corporateBody',
      'corporateBody',
      'corporateBody',
      'corporateBody',
    ]);
    const xml = document(recordOf(3, 'GEO', EVERY_PART));
    expect(xml).toContain('<entityType value="corporateBody"/>');
    expect(xml).toContain('<otherEntityTypes><otherEntityType><term>GEO</term></otherEntityType></otherEntityTypes>');
  });

  it("writes the record's state as EAC-CPF's maintenance status, a replaced record naming its replacement", () => {
    const statusOf = (record: EntityRecord) => /maintenanceStatus="([^"]+)"/.exec(document(record))?.[1];
    const base = sampleRecord(4);
    expect(statusOf({ ...base, state: 'ERS_NEW', revision: { ...base.revision, prevRev: undefined } })).toBe('new');
    expect(statusOf({ ...base, state: 'ERS_APPROVED' })).toBe('revised');
    expect(statusOf({ ...base, state: 'ERS_INVALID' })).toBe('deleted');
    const replaced = document({ ...base, state: 'ERS_REPLACED', replacedBy: { entityId: 77, entityUuid: uuid(77) } });
    expect(replaced).toContain('maintenanceStatus="deletedReplaced"');
    expect(replaced).toContain(
      `<relation><targetEntity targetType="agent" valueURI="${ORIGIN}/global/77"><part localType="entityId">77</part><part localType="entityUuid">${uuid(77)}</part></targetEntity><relationType>replacedBy</relationType></relation>`,
    );
  });

  it('writes names with their parts, the preferred one authorized and first', () => {
    const record = sampleRecord(8);
    const xml = document({ ...record, preferredNamePart: record.parts[1]!.partUuid });
    expect(xml).toContain(
      '<nameEntry status="authorized"><part localType="NM_MAIN">Novak 8</part></nameEntry><nameEntry status="alternative"><part localType="NM_MAIN">Novák 8</part><part localType="NM_MINOR">Jan Křtitel</part><useDates><dateRange localType="NM_DATE">',
    );
  });

  it('writes references as relations to their record pages, dates of existence, events and sources', () => {
    const xml = document(recordOf(2, 'PERSON', EVERY_PART));
    expect(xml).toContain(
      `<targetEntity targetType="agent" valueURI="${ORIGIN}/global/11"><part localType="entityId">11</part></targetEntity>`,
    );
    expect(xml).toContain('<relationType localType="REL_ENTITY">RT_FATHER</relationType>');
    expect(xml).toContain('<fromDate localType="CRE_DATE" notAfter="1316-05-14T23:59:59" standardDate="1316-05-14T00:00:00">');
    expect(xml).toContain('<toDate localType="EXT_DATE" certainty="approximate" standardDate="1378-11-29T00:00:00">');
    expect(xml).toContain(
      `<place localType="PT_CRE"><placeName valueURI="${ORIGIN}/global/9">9</placeName><placeRole>CRE_PLACE</placeRole></place>`,
    );
    expect(xml).toContain('<event>korunovace; v Římě</event>');
    expect(xml).toContain('<source href="https://example.org/korunovace"><reference>https://example.org/korunovace</reference></source>');
    expect(xml).toContain('<identityId localType="ID_ISNI">0000 0001 2138 4321</identityId>');
    expect(xml).toContain(`<representation href="${ORIGIN}/global/2" linkTitle="record page">text/html</representation>`);
    // Binary content has no place in EAC-CPF.
    expect(xml).not.toContain('AAEC');
  });

  it('names a record without a name by its number', () => {
    const xml = document({ ...sampleRecord(12), parts: [] });
    expect(xml).toContain('<nameEntry status="authorized"><part localType="entityId">12</part></nameEntry>');
  });
});

describe('the stored EAC-CPF element', () => {
  const bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  const contexts = [
    { origin: 'https://registry.example.org:8443', agencyName: 'Archiv & Registr Čech' },
    { origin: undefined, agencyName: 'Entity Records Service' },
    { origin: 'http://h/?a="b"&c', agencyName: '<odd> "agency"' },
  ];

  it("is, with an export's context put in, the element the writer writes for that context", async () => {
    for (const [name, record] of await everyRecord()) {
      const stored = storedEacCpfElement(record, JSON.stringify(record));
      expect(stored, name).toBeDefined();
      for (const context of contexts)
        expect(storedEacCpfFiller(context)(bytes(stored!)), `${name} in ${JSON.stringify(context)}`).toBe(
          bytes(eacCpfWriter(context)(record)),
        );
    }
  });

  it('is not stored for a record whose own text holds one of its marks', () => {
    const record = {
      ...sampleRecord(7),
      parts: [{ partUuid: uuid(7, 1), type: 'PT_NAME', items: [{ kind: 'string', type: 'NM_MAIN', value: 'mark \uE000 here' }] }],
    } as EntityRecord;
    expect(storedEacCpfElement(record, JSON.stringify(record))).toBeUndefined();
    expect(storedEacCpfElement(sampleRecord(7), JSON.stringify(sampleRecord(7)))).toBeDefined();
  });
});
