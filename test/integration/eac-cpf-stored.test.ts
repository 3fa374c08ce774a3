// The EAC-CPF element stored beside each current record (entity.eac_cpf,
// Migration20261129000200EntityEacCpf, domain/eac-cpf/stored.ts): written
// with the record by the batch write path, equal (its context put in) to
// what the writer writes from the record, never used stale, and what an
// EAC-CPF export writes; a record without one is written from its JSON, in
// the same file.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedEacCpfFiller } from '../../domain/eac-cpf/stored.ts';
import { eacCpfWriter } from '../../domain/eac-cpf/writer.ts';
import type { EntityRecord } from '../../domain/model.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create, namePart } from '../support/batches.ts';
import { eacRecordsOf } from '../support/eac-cpf-schema.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { snapshotExportFile } from '../support/snapshot-export.ts';

interface Row {
  record: EntityRecord;
  /** The stored bytes, one character a byte, as the export reads them. */
  stored: string | null;
}

describe('the stored EAC-CPF element of a record', () => {
  let harness: Harness;
  let ids: Record<'plain' | 'marked' | 'stale', number>;
  const row = async (entityId: number): Promise<Row> =>
    (await harness.sql<Row>('select record, eac_cpf as stored from entity where id = $1', [entityId]))[0]!;
  const bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

  beforeAll(async () => {
    harness = await startHarness();
    const entityType = `EACSTORED-${randomUUID().slice(0, 8)}`;
    const applied = await applyBatch(
      harness,
      batchXml([
        create('plain', 'Božena Němcová & <Praha> "Ratibořice"', { entityType }),
        // A character of the marks' private use area in the record's own text: not stored.
        create('marked', 'Značka \uE000 a \uE001', { entityType }),
        create('stale', 'Karel Hynek Mácha', { entityType, parts: [namePart('Karel Hynek Mácha'), namePart('Hynek')] }),
      ]),
    );
    ids = {
      plain: applied.revisions.get('plain')!.entityId,
      marked: applied.revisions.get('marked')!.entityId,
      stale: applied.revisions.get('stale')!.entityId,
    };
  }, 120_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("is written with the record, and with a context put in is the writer's element for that context", async () => {
    expect(
      await harness.sql(`select attcompression from pg_attribute where attrelid = 'entity'::regclass and attname = 'eac_cpf'`),
    ).toEqual([{ attcompression: 'l' }]);
    for (const entityId of [ids.plain, ids.stale]) {
      const { record, stored } = await row(entityId);
      expect(stored, String(entityId)).not.toBeNull();
      for (const context of [
        { origin: 'https://registry.example.org', agencyName: 'Archiv & <Registr>' },
        { origin: undefined, agencyName: 'Entity Records Service' },
      ])
        expect(storedEacCpfFiller(context)(stored!)).toBe(bytes(eacCpfWriter(context)(record)));
    }
    expect((await row(ids.marked)).stored).toBeNull();
  });

  it('is dropped when the record is written without it, under session_replication_role = replica too', async () => {
    await harness.sql(`update entity set record = jsonb_set(record, '{entityType}', '"EACSTORED-STALE"') where id = $1`, [ids.stale]);
    const changed = await row(ids.stale);
    expect(changed.record.entityType).toBe('EACSTORED-STALE');
    expect(changed.stored).toBeNull();
    const plain = await row(ids.plain);
    expect(plain.stored).not.toBeNull();
    const client = await harness.db.pool.connect();
    try {
      await client.query('begin');
      await client.query('set local session_replication_role = replica');
      await client.query(`update entity set record = jsonb_set(record, '{entityType}', '"EACSTORED-REPLICA"') where id = $1`, [ids.plain]);
      expect((await client.query<Row>('select eac_cpf as stored from entity where id = $1', [ids.plain])).rows[0]!.stored).toBeNull();
      await client.query('rollback');
    } finally {
      client.release();
    }
  });

  it('is what an EAC-CPF export writes, beside records written from their JSON, each equal to the writer’s element', async () => {
    const { file } = await snapshotExportFile(harness, [ids.plain, ids.marked, ids.stale], 'eac-cpf');
    const write = eacCpfWriter({ origin: harness.baseUrl, agencyName: harness.config.OAI_REPOSITORY_NAME });
    const expected = [];
    for (const entityId of [ids.plain, ids.marked, ids.stale].sort((x, y) => x - y)) expected.push(write((await row(entityId)).record));
    expect(eacRecordsOf(file)).toEqual(expected);
    expect(file).toContain('Značka \uE000 a \uE001');
  });
});
