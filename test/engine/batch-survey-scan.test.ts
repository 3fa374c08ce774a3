import { describe, expect, it } from 'vitest';
import { BatchSurvey } from '../../engine/batch/survey.ts';
import { readBatch } from '../../domain/xml/batch-reader.ts';
import { scanBatchSurvey } from '../../engine/batch/survey-scan.ts';
import { byteChunks, fixture, oneChunk } from '../fixtures/xml/support.ts';

const V2 = 'http://cam.tacr.cz/2025';
const HEADER = '<info><sender><id>a</id><name>A</name></sender></info>';

function batchV2(body: string, root = `<batchUpdate xmlns="${V2}">`, end = '</batchUpdate>'): string {
  return `${root}${HEADER}${body}${end}`;
}

/** What the apply takes from a survey, comparable with toEqual. */
function surveyed(survey: BatchSurvey) {
  return {
    commands: survey.commands,
    declarations: [...survey.declarations.values()].map((declaration) => ({ ...declaration, ref: { ...declaration.ref } })),
    duplicates: survey.duplicates,
    createsByUuid: [...survey.createsByUuid].map(([uuid, declaration]) => [uuid, declaration.localId]),
    lookups: survey.lookups(),
  };
}

async function byReading(xml: string) {
  const survey = new BatchSurvey();
  const summary = await readBatch(oneChunk(xml), (command) => survey.add(command));
  return { header: summary.header, changes: summary.changes, survey: surveyed(survey) };
}

async function byScan(source: AsyncIterable<Uint8Array | string>) {
  const survey = new BatchSurvey();
  let chunks = 0;
  const scanned = await scanBatchSurvey(source, survey, async () => {
    chunks += 1;
  });
  return scanned === undefined ? undefined : { header: scanned.header, changes: scanned.changes, survey: surveyed(survey), chunks };
}

const CREATES = `
  <createEntity localId="a1" entityType="PERSON" entityUuid="81a76ca5-5b5e-4ab6-bbb7-0de708c829b4">
    <parts><part type="PT_NAME"><items>
      <string type="NM_MAIN">Nov&#225;k &lt;a1&gt;</string>
      <entityRef type="REL_ENTITY" spec="RT_TEACHER"><entityRef entityId=" 42 "/></entityRef>
      <entityRef type="REL_ENTITY"><entityRef entityUuid='7ae81dfe-0d82-4718-a0c2-d3fdd188408c' entityId="43"/></entityRef>
      <entityRef type="REL_ENTITY"><localEntityRef>b2</localEntityRef></entityRef>
    </items><eits><entityRef type="REL_ENTITY"><entityRef entityId="44"/></entityRef></eits></part></parts>
  </createEntity>
  <!-- <createEntity localId="in-a-comment" entityType="PERSON"/> -->
  <createEntity localId="b2" entityType="PERSON"/>
  <createEntity localId="a&amp;b" entityType="PERSON"><parts><part type="PT_NAME"><items><string type="NM_MAIN"><![CDATA[<createEntity localId="in-cdata">]]></string></items></part></parts></createEntity>
  <createEntity localId="a1" entityType="PERSON" entityUuid="81a76ca5-5b5e-4ab6-bbb7-0de708c829b4"/>
  <createEntity entityType="PERSON" localId="c3" entityUuid="81a76ca5-5b5e-4ab6-bbb7-0de708c829b4"/>`;

describe('scanBatchSurvey (the first pass over a stored body)', () => {
  it('surveys the fixture batches exactly as reading their commands does, in chunks cut anywhere', async () => {
    for (const name of ['batch-v2.xml', 'batch-v1.xml']) {
      const xml = fixture(name);
      const expected = await byReading(xml);
      for (const size of [1, 7, 64, 1 << 20]) {
        const scanned = await byScan(byteChunks(xml, size));
        expect({ ...scanned, chunks: undefined }).toEqual({ ...expected, chunks: undefined });
      }
    }
  });

  it('takes creates from their bytes (references, duplicates, character references, comments, CDATA) as the reader does', async () => {
    const xml = batchV2(CREATES);
    const expected = await byReading(xml);
    expect(expected.survey.lookups.targets).toEqual([
      { entityId: 42 },
      { entityId: 43, entityUuid: '7ae81dfe-0d82-4718-a0c2-d3fdd188408c' },
      { entityId: 44 },
    ]);
    expect(expected.survey.duplicates).toEqual([{ ordinal: 3, localId: 'a1' }]);
    for (const size of [3, 1 << 20])
      expect({ ...(await byScan(byteChunks(xml, size))), chunks: undefined }).toEqual({ ...expected, chunks: undefined });
  });

  it('reads a document whose elements carry a namespace prefix', async () => {
    const prefixed = `<b:batchUpdate xmlns:b="${V2}"><b:info><b:sender><b:id>a</b:id><b:name>A</b:name></b:sender></b:info><b:createEntity localId="p1" entityType="PERSON"><b:parts><b:part type="PT_NAME"><b:items><b:entityRef type="REL_ENTITY"><b:entityRef entityId="7"/></b:entityRef></b:items></b:part></b:parts></b:createEntity></b:batchUpdate>`;
    const expected = await byReading(prefixed);
    expect(expected.survey.lookups.targets).toEqual([{ entityId: 7 }]);
    expect({ ...(await byScan(oneChunk(prefixed))), chunks: undefined }).toEqual({ ...expected, chunks: undefined });
  });

  it('reads updates in order with the full reader: a userRef to a user an earlier command declared resolves', async () => {
    const xml = batchV2(`
      <updateEntity><entity localId="e1" entityId="5" rev="e9e0c4f4-4ff7-4bf8-8933-af51e5dc25a4"/>
        <addParticipant><role>APPROVER</role><lastChange>2025-03-01T10:15:00Z</lastChange><user localId="u1"><id>x</id><name>X</name></user></addParticipant></updateEntity>
      <createEntity localId="n1" entityType="PERSON"/>
      <updateEntity><entityRef>n1</entityRef>
        <addParticipant><role>APPROVER</role><lastChange>2025-03-01T10:15:00Z</lastChange><userRef>u1</userRef></addParticipant></updateEntity>
      <updateEntity><entityRef>e1</entityRef><setState><state>ERS_APPROVED</state><entityRef entityUuid="7ae81dfe-0d82-4718-a0c2-d3fdd188408c"/></setState></updateEntity>`);
    const expected = await byReading(xml);
    expect(expected.survey.lookups.records).toEqual([{ entityId: 5 }]);
    expect({ ...(await byScan(byteChunks(xml, 50))), chunks: undefined }).toEqual({ ...expected, chunks: undefined });
  });

  it('reports progress once a chunk', async () => {
    const scanned = await byScan(byteChunks(batchV2(CREATES), 100));
    expect(scanned?.chunks).toBe(Math.ceil(new TextEncoder().encode(batchV2(CREATES)).length / 100));
  });

  it('gives the pass back to the full reader for what it does not read: a DOCTYPE, a cut-off body, a command the reader refuses', async () => {
    expect(await byScan(oneChunk(`<!DOCTYPE batchUpdate>${batchV2(CREATES)}`))).toBeUndefined();
    expect(await byScan(oneChunk(batchV2(CREATES).slice(0, -20)))).toBeUndefined();
    expect(await byScan(oneChunk(batchV2('<updateEntity><entityRef>x</entityRef></updateEntity>')))).toBeUndefined();
    expect(
      await byScan(oneChunk(batchV2('<createEntity localId="x" entityType="PERSON"><parts><part type="PT_NOPE"/></parts></createEntity>'))),
    ).toEqual(expect.objectContaining({ changes: 1 }));
    expect(
      await byScan(oneChunk(batchV2('<createEntity localId="x" entityType="PERSON"/>', '<batchUpdate xmlns="urn:other">'))),
    ).toBeUndefined();
    expect(
      await byScan(oneChunk(`<batchUpdate xmlns="${V2}"><createEntity localId="x" entityType="PERSON"/></batchUpdate>`)),
    ).toBeUndefined();
  });
});
