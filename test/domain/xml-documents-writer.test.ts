import { describe, expect, it } from 'vitest';
import type { QueryResult, RevisionChanges, RevisionPointer } from '../../domain/model.ts';
import { BATCH_ISSUE_CODES } from '../../domain/model.ts';
import { serializeQueryResult } from '../../domain/xml/query-writer.ts';
import { serializeBatchResult, v1ErrorType } from '../../domain/xml/result-writer.ts';
import { writeRevisions } from '../../domain/xml/revisions-writer.ts';
import { writeUpdates, writeUpdatesFrom } from '../../domain/xml/updates-writer.ts';
import { BATCH_V2_COMMANDS } from '../fixtures/xml/batch-commands.ts';
import { FAILURE, SUCCESS } from '../fixtures/xml/batch-results.ts';
import { collect, fromArray, readRevisionsDocument, sampleParts, uuid } from '../fixtures/xml/support.ts';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

describe('v1ErrorType', () => {
  it('maps the issue codes v1 has a type for, and everything else to ET_ERROR', () => {
    expect(v1ErrorType(BATCH_ISSUE_CODES.duplicateEntityUuid)).toBe('ET_DUPLICATED_UUID');
    expect(v1ErrorType(BATCH_ISSUE_CODES.staleRevision)).toBe('ET_OTHER_REV');
    expect(v1ErrorType(BATCH_ISSUE_CODES.preferredNameExists)).toBe('ET_PREF_NAME_EXIST');
    for (const code of [BATCH_ISSUE_CODES.unknownEntity, BATCH_ISSUE_CODES.invalidForceKey, 'SomethingNew', undefined]) {
      expect(v1ErrorType(code)).toBe('ET_ERROR');
    }
    expect(v1ErrorType('ET_OTHER_REV')).toBe('ET_OTHER_REV');
  });
});

describe('serializeBatchResult', () => {
  it('writes a v2 success with metadata revisions', () => {
    expect(serializeBatchResult(SUCCESS, 'v2')).toBe(
      `${DECLARATION}<batchChangeSuccess xmlns="http://cam.tacr.cz/2025" transaction="${uuid(1, 50)}">` +
        `<revision localId="n1" entityId="100" entityUuid="${uuid(100)}" rev="${uuid(100, 1)}" metadataRev="${uuid(100, 2)}"/>` +
        `<revision localId="e1" entityId="42" entityUuid="${uuid(42)}" rev="${uuid(42, 1)}" metadataRev="${uuid(42, 2)}"/>` +
        '</batchChangeSuccess>',
    );
  });

  it('writes a v1 success as bus without metadata revisions', () => {
    expect(serializeBatchResult(SUCCESS, 'v1')).toBe(
      `${DECLARATION}<bus xmlns="http://cam.tacr.cz/2019" trns="${uuid(1, 50)}">` +
        `<rev lid="n1" eid="100" euid="${uuid(100)}" rev="${uuid(100, 1)}"/>` +
        `<rev lid="e1" eid="42" euid="${uuid(42)}" rev="${uuid(42, 1)}"/>` +
        '</bus>',
    );
  });

  it('writes a v2 failure with every issue per entity and the force key', () => {
    const xml = serializeBatchResult(FAILURE, 'v2');
    expect(xml.startsWith(`${DECLARATION}<batchChangeFailure xmlns="http://cam.tacr.cz/2025"><issues localId="n1"><issue><uuid>`)).toBe(
      true,
    );
    expect(xml).toContain(
      '<issueCode>DuplicateEntityUuid</issueCode><message>UUID už existuje &lt;n1&gt;</message><from>2025-03-04T12:00:00Z</from>',
    );
    expect(xml).toContain('<severity>WARNING</severity>');
    expect(xml).toContain('<partRef type="PT_NAME"/><from>');
    expect(xml).toContain('<entityRef entityId="5"/><from>');
    expect(xml).toContain('</issues><issues><issue>');
    expect(xml).not.toContain('quiet');
    // Issues of one entity stay in one element: localId is an xs:ID.
    expect(xml.match(/localId="e1"/g)).toHaveLength(1);
    expect(xml).toContain('<message>stará revize</message><from>2025-03-04T12:00:00Z</from></issue><issue>');
    expect(xml.endsWith('</issues><forceKey>fk-1</forceKey></batchChangeFailure>')).toBe(true);
  });

  it('writes a v1 failure as one em per problem with its ErrorType, the lid (an xs:ID) once per entity', () => {
    expect(serializeBatchResult(FAILURE, 'v1')).toBe(
      `${DECLARATION}<bue xmlns="http://cam.tacr.cz/2019">` +
        '<em lid="n1"><et>ET_DUPLICATED_UUID</et><msg>UUID už existuje &lt;n1&gt;</msg></em>' +
        '<em><et>ET_PREF_NAME_EXIST</et><msg>Jméno „Dvořák“ už existuje</msg></em>' +
        '<em lid="e1"><et>ET_OTHER_REV</et><msg>stará revize</msg></em>' +
        '<em><et>ET_ERROR</et><msg>ještě jednou</msg></em>' +
        '<em><et>ET_ERROR</et><msg>neznámý odkaz</msg></em>' +
        '</bue>',
    );
  });
});

const updates = BATCH_V2_COMMANDS.filter((command) => command.kind === 'update');
const REVISIONS: RevisionChanges[] = [
  {
    revisionUuid: uuid(1, 70),
    batchId: uuid(1, 71),
    entityId: 100,
    entityUuid: uuid(100),
    created: { entityType: 'PERSON', parts: sampleParts(100) },
    changes: [],
  },
  ...updates.map((command, index) => ({
    revisionUuid: uuid(index, 72),
    entityId: 42 + index,
    entityUuid: uuid(42 + index),
    changes: command.changes,
  })),
];

describe('writeRevisions', () => {
  it('writes every change kind of the public RevChanges in v2 (no issue changes) and reads back the same revisions', async () => {
    const chunks = await collect(writeRevisions(fromArray(REVISIONS), 'v2'));
    expect(chunks[0]).toBe(`${DECLARATION}<entityRecordRevisions xmlns="http://cam.tacr.cz/2025">`);
    expect(chunks[1]).toContain(`<newEntity entityType="PERSON" entityUuid="${uuid(100)}"><parts>`);
    const xml = chunks.join('');
    expect(xml).toContain('addParticipant');
    expect(xml).not.toMatch(/addIssue|removeIssue/);
    const expected = REVISIONS.map((revision) => ({
      ...revision,
      changes: revision.changes.filter((change) => !['addIssue', 'removeIssue', 'addIssueStatus'].includes(change.op)),
    })).filter((revision) => revision.created !== undefined || revision.changes.length > 0);
    expect(chunks).toHaveLength(expected.length + 2);
    expect(readRevisionsDocument(xml, 'v2')).toEqual(expected);
  });

  it('writes v1 revisions (errs) without metadata changes and without metadata-only revisions', async () => {
    const xml = (await collect(writeRevisions(fromArray(REVISIONS), 'v1'))).join('');
    expect(xml.startsWith(`${DECLARATION}<errs xmlns="http://cam.tacr.cz/2019"><rev rev="${uuid(1, 70)}" eid="100"`)).toBe(true);
    expect(xml).toContain('<ner et="PERSON"');
    expect(xml).toContain('<np pid=');
    expect(xml).toContain('<sent>PERSON_FICTIVE</sent>');
    expect(xml).not.toMatch(/addIssue|Participant|<nip/);
    const expected = REVISIONS.map((revision) => ({
      ...revision,
      changes: revision.changes.filter((change) => !['addParticipant', 'addIssue', 'removeIssue', 'addIssueStatus'].includes(change.op)),
    })).filter((revision) => revision.created !== undefined || revision.changes.length > 0);
    expect(expected).toHaveLength(REVISIONS.length - 1);
    expect(readRevisionsDocument(xml, 'v1')).toEqual(expected);
  });
});

describe('serializeQueryResult', () => {
  const result: QueryResult = {
    count: 1234,
    entities: [
      {
        entityId: 1,
        entityUuid: uuid(1),
        entityType: 'PERSON',
        name: 'Dvořák, Antonín',
        description: 'skladatel & dirigent',
        lookup: { value: '…Antonín Dvořák…', partType: 'PT_NAME', highlights: [{ start: 1, end: 8 }] },
      },
      { entityId: 2, entityUuid: uuid(2), entityType: 'GEO', name: 'Nelahozeves' },
    ],
  };

  it('writes v2 queryResult', () => {
    expect(serializeQueryResult(result, 'v2')).toBe(
      `${DECLARATION}<queryResult xmlns="http://cam.tacr.cz/2025"><header><count>1234</count></header><list>` +
        `<entityInfo et="PERSON" entityId="1" entityUuid="${uuid(1)}"><name>Dvořák, Antonín</name><description>skladatel &amp; dirigent</description>` +
        '<lookup pt="PT_NAME"><value>…Antonín Dvořák…</value><highlightPos spos="1" epos="8"/></lookup></entityInfo>' +
        `<entityInfo et="GEO" entityId="2" entityUuid="${uuid(2)}"><name>Nelahozeves</name></entityInfo>` +
        '</list></queryResult>',
    );
  });

  it('writes v1 qr', () => {
    expect(serializeQueryResult(result, 'v1')).toBe(
      `${DECLARATION}<qr xmlns="http://cam.tacr.cz/2019"><ri><cnt>1234</cnt></ri><list>` +
        `<fei et="PERSON" eid="1" euid="${uuid(1)}"><name>Dvořák, Antonín</name><dsc>skladatel &amp; dirigent</dsc>` +
        '<rl pt="PT_NAME"><v>…Antonín Dvořák…</v><hp spos="1" epos="8"/></rl></fei>' +
        `<fei et="GEO" eid="2" euid="${uuid(2)}"><name>Nelahozeves</name></fei>` +
        '</list></qr>',
    );
  });
});

describe('writeUpdates and writeUpdatesFrom', () => {
  const pointers: RevisionPointer[] = [
    { entityId: 1, entityUuid: uuid(1), rev: uuid(1, 1), metadataRev: uuid(1, 2) },
    { entityId: 2, entityUuid: uuid(2), rev: uuid(2, 1) },
  ];

  it('writes v2 updates and v1 ups', async () => {
    expect((await collect(writeUpdates(fromArray([pointers]), 'v2'))).join('')).toBe(
      `${DECLARATION}<updates xmlns="http://cam.tacr.cz/2025">` +
        `<revInfo entityId="1" entityUuid="${uuid(1)}" rev="${uuid(1, 1)}" metadataRev="${uuid(1, 2)}"/>` +
        `<revInfo entityId="2" entityUuid="${uuid(2)}" rev="${uuid(2, 1)}"/></updates>`,
    );
    expect((await collect(writeUpdates(fromArray([pointers]), 'v1'))).join('')).toBe(
      `${DECLARATION}<ups xmlns="http://cam.tacr.cz/2019">` +
        `<ri eid="1" euid="${uuid(1)}" rev="${uuid(1, 1)}"/><ri eid="2" euid="${uuid(2)}" rev="${uuid(2, 1)}"/></ups>`,
    );
  });

  it('sends many rows per chunk, and no chunk is large', async () => {
    const many = Array.from({ length: 20_000 }, (_, n) => ({ entityId: n, entityUuid: uuid(n), rev: uuid(n, 1) }));
    const chunks = await collect(writeUpdates(fromArray([many]), 'v2'));
    expect(chunks.length).toBeGreaterThan(50);
    expect(chunks.length).toBeLessThan(1_000);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(20_000);
  });

  it('writes updatesFrom with and without the list', async () => {
    const info = { from: uuid(9, 1), to: uuid(9, 2), count: 2 };
    expect((await collect(writeUpdatesFrom(info, fromArray([pointers]), 'v2'))).join('')).toBe(
      `${DECLARATION}<updatesFrom xmlns="http://cam.tacr.cz/2025"><info><from>${info.from}</from><to>${info.to}</to><count>2</count></info>` +
        `<updates><revInfo entityId="1" entityUuid="${uuid(1)}" rev="${uuid(1, 1)}" metadataRev="${uuid(1, 2)}"/>` +
        `<revInfo entityId="2" entityUuid="${uuid(2)}" rev="${uuid(2, 1)}"/></updates></updatesFrom>`,
    );
    expect((await collect(writeUpdatesFrom(info, undefined, 'v1'))).join('')).toBe(
      `${DECLARATION}<upsf xmlns="http://cam.tacr.cz/2019"><inf><from>${info.from}</from><to>${info.to}</to><cnt>2</cnt></inf></upsf>`,
    );
  });
});
