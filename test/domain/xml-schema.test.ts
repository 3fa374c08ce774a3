import { describe, expect, it } from 'vitest';
import type { EntityRecord, RevisionChanges, XmlVersion } from '../../domain/model.ts';
import { validateDocument } from '../../engine/validation/index.ts';
import { serializeBatch } from '../../domain/xml/batch-writer.ts';
import { serializeEntity, writeEntities } from '../../domain/xml/entity-writer.ts';
import { serializeQueryResult } from '../../domain/xml/query-writer.ts';
import { serializeBatchResult } from '../../domain/xml/result-writer.ts';
import { writeRevisions } from '../../domain/xml/revisions-writer.ts';
import { writeUpdates, writeUpdatesFrom } from '../../domain/xml/updates-writer.ts';
import { BATCH_V2_COMMANDS, BATCH_V2_HEADER } from '../fixtures/xml/batch-commands.ts';
import { FAILURE, SUCCESS } from '../fixtures/xml/batch-results.ts';
import { collect, fixture, fromArray, sampleParts, sampleRecord, uuid } from '../fixtures/xml/support.ts';

const encoder = new TextEncoder();

async function expectValid(xml: string, version: XmlVersion): Promise<void> {
  await expect(validateDocument(encoder.encode(xml), version)).resolves.toBeUndefined();
}

const replaced: EntityRecord = {
  ...sampleRecord(2),
  state: 'ERS_REPLACED',
  replacedBy: { entityId: 3, entityUuid: uuid(3) },
  preferredNamePart: uuid(2, 2),
};

const revisions: RevisionChanges[] = [
  {
    revisionUuid: uuid(1, 70),
    batchId: uuid(1, 71),
    entityId: 100,
    entityUuid: uuid(100),
    created: { entityType: 'PERSON', parts: sampleParts(100) },
    changes: [],
  },
  ...BATCH_V2_COMMANDS.flatMap((command, index) =>
    command.kind === 'update'
      ? [{ revisionUuid: uuid(index, 72), entityId: 42 + index, entityUuid: uuid(42 + index), changes: command.changes }]
      : [],
  ),
];

const ISSUE_OPS = new Set(['addIssue', 'removeIssue', 'addIssueStatus']);
const withoutIssueChanges = revisions.map((revision) => ({
  ...revision,
  changes: revision.changes.filter((change) => !ISSUE_OPS.has(change.op)),
}));

describe.each(['v2', 'v1'] as const)('every %s document the writers produce is valid against its schema', (version) => {
  it('the fixture batch, as read and as written', async () => {
    await expectValid(fixture(version === 'v2' ? 'batch-v2.xml' : 'batch-v1.xml'), version);
    await expectValid(serializeBatch(BATCH_V2_HEADER, BATCH_V2_COMMANDS, version), version);
  });

  it('entity and entities', async () => {
    await expectValid(serializeEntity(sampleRecord(1), version), version);
    await expectValid(serializeEntity(replaced, version), version);
    await expectValid((await collect(writeEntities(fromArray([sampleRecord(1), replaced]), version))).join(''), version);
    await expectValid((await collect(writeEntities(fromArray([]), version))).join(''), version);
  });

  it('revisions', async () => {
    await expectValid((await collect(writeRevisions(fromArray(withoutIssueChanges), version))).join(''), version);
  });

  // The public RevChanges has no issue changes: the writer leaves them out, and the document stays valid.
  it('revisions with issue changes', async () => {
    await expectValid((await collect(writeRevisions(fromArray(revisions), version))).join(''), version);
  });

  it('batch results', async () => {
    await expectValid(serializeBatchResult(SUCCESS, version), version);
    await expectValid(serializeBatchResult(FAILURE, version), version);
  });

  it('search results and update lists', async () => {
    const query = {
      count: 2,
      entities: [
        {
          entityId: 1,
          entityUuid: uuid(1),
          entityType: 'PERSON',
          name: 'Dvořák',
          description: 'skladatel',
          lookup: { value: 'Dvořák', partType: 'PT_NAME' as const, highlights: [{ start: 0, end: 6 }] },
        },
        { entityId: 2, entityUuid: uuid(2), entityType: 'GEO', name: 'Nelahozeves' },
      ],
    };
    await expectValid(serializeQueryResult(query, version), version);
    const pointers = [
      { entityId: 1, entityUuid: uuid(1), rev: uuid(1, 1), metadataRev: uuid(1, 2) },
      { entityId: 2, entityUuid: uuid(2), rev: uuid(2, 1) },
    ];
    await expectValid((await collect(writeUpdates(fromArray([pointers]), version))).join(''), version);
    const info = { from: uuid(9, 1), to: uuid(9, 2), count: 2 };
    await expectValid((await collect(writeUpdatesFrom(info, fromArray([pointers]), version))).join(''), version);
    await expectValid((await collect(writeUpdatesFrom(info, undefined, version))).join(''), version);
  });
});
