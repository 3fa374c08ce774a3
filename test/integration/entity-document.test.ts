// The v2 document stored beside each current record (entity.document_bytes,
// Migration20261125000100EntityDocument, held as its UTF-8 bytes one
// character a byte since Migration20261127000100EntityDocumentBytes; this
// test reads and writes it through PostgreSQL's own conversions, not the
// service's db/document-bytes.ts): written with the record by the
// batch write path, equal to what serializeEntity builds from the record,
// sent by GET as it is, and never served stale: a record written without its
// document loses the stored one and is built from the record again.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { recordRepository } from '../../db/records.ts';
import type { EntityRecord } from '../../domain/model.ts';
import { v2DocumentRevision } from '../../domain/xml/compiled-entity-writer.ts';
import { serializeEntity } from '../../domain/xml/index.ts';
import { findCurrentDocument, findCurrentRecord } from '../../services/reads/entities.ts';
import { applyBatch, type AppliedRevision } from '../support/apply.ts';
import { batchXml, create, namePart, update } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

interface Row {
  id: string;
  record: EntityRecord;
  document: string | null;
}

describe('the stored v2 document of a record', () => {
  let harness: Harness;
  let a: AppliedRevision;
  let b: AppliedRevision;
  let c: AppliedRevision;
  const row = async (entityId: number): Promise<Row> =>
    (
      await harness.sql<Row>(
        `select id, record, convert_from(convert_to(document_bytes, 'LATIN1'), 'UTF8') as document from entity where id = $1`,
        [entityId],
      )
    )[0]!;
  // The column set to a document's text, held as its bytes.
  const SET_DOCUMENT = `document_bytes = convert_from(convert_to($3::text, 'UTF8'), 'LATIN1')`;
  const body = async (path: string) => {
    const answer = await harness.api(path);
    expect(answer.status, path).toBe(200);
    return { body: await answer.text(), etag: answer.headers.get('etag') };
  };

  beforeAll(async () => {
    harness = await startHarness();
    const entityType = `DOCUMENT-${randomUUID()}`;
    const applied = await applyBatch(
      harness,
      batchXml([
        create('a', 'Božena Němcová & <Praha> "Ratibořice"', { entityType }),
        create('b', 'Karel Hynek Mácha', { entityType, parts: [namePart('Karel Hynek Mácha'), namePart('Hynek')] }),
        create('c', 'Jan Neruda', { entityType }),
      ]),
    );
    [a, b, c] = ['a', 'b', 'c'].map((id) => applied.revisions.get(id)!) as [AppliedRevision, AppliedRevision, AppliedRevision];
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('is written with each created record, equal to the document built from it, and is what GET sends', async () => {
    // Compressed with lz4 (this server has it).
    expect(
      await harness.sql(`select attcompression from pg_attribute where attrelid = 'entity'::regclass and attname = 'document_bytes'`),
    ).toEqual([{ attcompression: 'l' }]);
    for (const entity of [a, b, c]) {
      const { record, document } = await row(entity.entityId);
      expect(document).not.toBeNull();
      expect(document).toBe(serializeEntity(record, 'v2'));
      const got = await body(`/api/v2/entities/${entity.entityId}`);
      expect(got.body).toBe(document);
      // The ETag read from the document is the record's.
      expect(got.etag).toBe(`"${record.revision.rev}.${record.revision.metadataRev}"`);
      expect(v2DocumentRevision(document!)).toEqual({ rev: record.revision.rev, metadataRev: record.revision.metadataRev });
      // Read as its bytes, one character a byte (each above 0x7f a character of its own).
      const read = await findCurrentDocument(harness.db.records, { entityUuid: entity.entityUuid });
      expect(read).toEqual({ documentBytes: Buffer.from(document!, 'utf8').toString('latin1') });
    }
  });

  it('is rewritten with each updated record (content and metadata-only changes)', async () => {
    const applied = await applyBatch(
      harness,
      batchXml([
        update('ua', a.entityId, a.rev, [
          {
            op: 'newPart',
            part: {
              partUuid: randomUUID(),
              type: 'PT_BODY',
              items: [{ kind: 'string', type: 'BRIEF_DESC', value: 'spisovatelka <1820>' }],
            },
          },
        ]),
        update('ub', b.entityId, b.rev, [{ op: 'setEntityType', entityType: `DOCUMENT-${randomUUID()}` }]),
        update('uc', c.entityId, c.rev, [
          {
            op: 'addParticipant',
            participant: { role: 'APPROVER', lastChange: '2026-11-25T03:00:00Z', user: { id: 'u-9', name: 'Jana Revizorová' } },
          },
        ]),
      ]),
    );
    for (const [entity, localId] of [
      [a, 'ua'],
      [b, 'ub'],
      [c, 'uc'],
    ] as const) {
      const { record, document } = await row(entity.entityId);
      expect(applied.revisions.get(localId)).toBeDefined();
      expect(document).toBe(serializeEntity(record, 'v2'));
      expect((await body(`/api/v2/entities/${entity.entityId}`)).body).toBe(document);
    }
    expect((await row(a.entityId)).document).toContain('spisovatelka &lt;1820&gt;');
  });

  it('is never served stale: a record written without its document loses it, and GET builds from the record', async () => {
    const before = await row(c.entityId);
    const client = await harness.db.pool.connect();
    try {
      // A write of the record alone (a hand-made fix, a future path that forgets the document).
      await client.query(`update entity set record = jsonb_set(record, '{entityType}', '"STALE-CHECK"') where id = $1`, [c.entityId]);
      const changed = await row(c.entityId);
      expect(changed.document).toBeNull();
      const expected = serializeEntity(changed.record, 'v2');
      expect(expected).toContain('entityType="STALE-CHECK"');
      expect((await body(`/api/v2/entities/${c.entityId}`)).body).toBe(expected);
      expect(await findCurrentDocument(harness.db.records, { entityId: c.entityId })).toEqual({ record: changed.record });
      // Under session_replication_role = replica (bench/lib/load.ts's loading sessions) too.
      await client.query(`update entity set record = $2, ${SET_DOCUMENT} where id = $1`, [c.entityId, before.record, before.document]);
      expect((await row(c.entityId)).document).toBe(before.document);
      await client.query('set session_replication_role = replica');
      await client.query(`update entity set record = jsonb_set(record, '{entityType}', '"STALE-REPLICA"') where id = $1`, [c.entityId]);
      await client.query('set session_replication_role = origin');
      expect((await row(c.entityId)).document).toBeNull();
      // A write of both keeps the new document, even one of the same length as the old.
      const record = { ...before.record, entityType: 'SAME-LENGTH-A' };
      const document = serializeEntity(record, 'v2');
      await client.query(`update entity set record = $2, ${SET_DOCUMENT} where id = $1`, [c.entityId, record, document]);
      const again = { ...record, entityType: 'SAME-LENGTH-B' };
      const againDocument = serializeEntity(again, 'v2');
      expect(againDocument.length).toBe(document.length);
      await client.query(`update entity set record = $2, ${SET_DOCUMENT} where id = $1`, [c.entityId, again, againDocument]);
      expect((await row(c.entityId)).document).toBe(againDocument);
      expect((await body(`/api/v2/entities/${c.entityId}`)).body).toBe(againDocument);
      // A write of the record with the very document it had is taken as one without: no stored document.
      await client.query(`update entity set record = $2, ${SET_DOCUMENT} where id = $1`, [c.entityId, record, againDocument]);
      expect((await row(c.entityId)).document).toBeNull();
      expect((await body(`/api/v2/entities/${c.entityId}`)).body).toBe(document);
    } finally {
      await client.query(`update entity set record = $2, ${SET_DOCUMENT} where id = $1`, [c.entityId, before.record, before.document]);
      client.release();
    }
  });

  it('is not sent when no revision can be read from it: the Koa chain builds the document from the record', async () => {
    const { record, document } = await row(b.entityId);
    try {
      await harness.sql(`update entity set document_bytes = 'not a document' where id = $1`, [b.entityId]);
      const got = await body(`/api/v2/entities/${b.entityId}`);
      expect(got.body).toBe(serializeEntity(record, 'v2'));
      expect(got.etag).toBe(`"${record.revision.rev}.${record.revision.metadataRev}"`);
    } finally {
      await harness.sql(`update entity set document_bytes = convert_from(convert_to($2::text, 'UTF8'), 'LATIN1') where id = $1`, [
        b.entityId,
        document,
      ]);
    }
  });

  it('is read from the row itself: GET reads no TOAST page, where the record and its EAC-CPF element are kept', async () => {
    // Values that do not compress, so that the row is past the size where PostgreSQL moves columns out of it.
    const name = () => Array.from({ length: 4 }, () => randomUUID()).join(' ');
    const parts = Array.from({ length: 15 }, () => namePart(name()));
    const large = (await applyBatch(harness, batchXml([create('large', '', { parts })]))).revisions.get('large')!;
    // One connection, so that its backend's counters of the entity's TOAST table are this read's alone
    // (pg_stat_get_xact_blocks_fetched: blocks not yet reported, which happens only between transactions).
    const pool = new pg.Pool({ connectionString: withDatabaseUser(harness.config.DATABASE_URL), max: 1 });
    const records = recordRepository(pool);
    const toastBlocksReadBy = async (read: () => Promise<unknown>) => {
      const blocks = async () =>
        Number(
          (
            await pool.query<{ blocks: string }>(
              `select pg_stat_get_xact_blocks_fetched(reltoastrelid) as blocks from pg_class where oid = 'entity'::regclass`,
            )
          ).rows[0]!.blocks,
        );
      await pool.query('begin');
      try {
        const before = await blocks();
        await read();
        return (await blocks()) - before;
      } finally {
        await pool.query('rollback');
      }
    };
    try {
      const document = await toastBlocksReadBy(async () =>
        expect((await findCurrentDocument(records, { entityId: large.entityId }))?.documentBytes).toBeDefined(),
      );
      const record = await toastBlocksReadBy(async () =>
        expect((await findCurrentRecord(records, { entityId: large.entityId }))?.entityId).toBe(large.entityId),
      );
      const eacCpf = await toastBlocksReadBy(() =>
        pool.query('select eac_cpf from entity where id = $1 and eac_cpf is not null', [large.entityId]),
      );
      expect({ document, recordOutOfRow: record > 0, eacCpfOutOfRow: eacCpf > 0 }).toEqual({
        document: 0,
        recordOutOfRow: true,
        eacCpfOutOfRow: true,
      });
    } finally {
      await pool.end();
    }
  });

  it('is read beside the records others read in the same turn: a record read for v1 or Koa makes the statement send records', async () => {
    const pool = harness.db.pool;
    const statements: string[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => {
      statements.push(String((args[0] as pg.QueryConfig).name ?? args[0]));
      return query(...args);
    }) as typeof pool.query;
    try {
      const documents = await Promise.all([a, b].map((entity) => findCurrentDocument(harness.db.records, { entityId: entity.entityId })));
      expect(statements).toEqual(['current-documents-by-ids']);
      expect(documents.map((form) => Buffer.from(form!.documentBytes!, 'latin1').toString('utf8'))).toEqual([
        (await row(a.entityId)).document,
        (await row(b.entityId)).document,
      ]);
      statements.length = 0;
      const [document, record, missing] = await Promise.all([
        findCurrentDocument(harness.db.records, { entityId: a.entityId }),
        findCurrentRecord(harness.db.records, { entityId: a.entityId }),
        findCurrentDocument(harness.db.records, { entityId: 2147483003 }),
      ]);
      expect(statements).toEqual(['current-records-by-ids']);
      expect(document).toEqual({ record });
      expect(record?.entityId).toBe(a.entityId);
      expect(missing).toBeUndefined();
    } finally {
      pool.query = query as typeof pool.query;
    }
  });
});
