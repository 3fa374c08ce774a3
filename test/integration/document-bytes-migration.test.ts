// Migration20261127000100EntityDocumentBytes: documents stored before it (as
// text) are rewritten as their UTF-8 bytes one character a byte, ASCII ones
// stay as they are, the stale-document trigger follows the renamed column,
// and down() gives the text back. A database of its own, migrated step by step.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { ensureDatabase, openOrm, type Orm } from '../../db/orm.ts';

const BEFORE = 'Migration20261125000200ToastLz4';
const MIGRATION = 'Migration20261127000100EntityDocumentBytes';

describe('the migration to documents held as bytes', () => {
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/er_test_document_bytes_${randomBytes(3).toString('hex')}`;
  let orm: Orm;
  let client: pg.Client;

  beforeAll(async () => {
    await ensureDatabase(url.toString());
    orm = await openOrm(url.toString());
    await orm.migrator.up({ to: BEFORE });
    client = new pg.Client({ connectionString: withDatabaseUser(url.toString()) });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await orm?.close();
    const admin = new URL(withDatabaseUser(url.toString()));
    admin.pathname = '/postgres';
    const dropper = new pg.Client({ connectionString: admin.toString() });
    await dropper.connect();
    await dropper.query(`drop database if exists ${pg.escapeIdentifier(url.pathname.slice(1))} with (force)`);
    await dropper.end();
  });

  const insert = (id: number, document: string | null) =>
    client.query(
      `insert into entity (id, uuid, entity_type, state, rev, metadata_rev, last_seq, record, document) values ($1, $2, 'PERSON', 'ERS_NEW', $3, $3, 0, '{}', $4)`,
      [id, randomUUID(), randomUUID(), document],
    );

  it('rewrites documents beyond ASCII as their bytes, keeps ASCII ones and NULLs, and down() gives the text back', async () => {
    const czech = '<entity><name>Božena Němcová &amp; Ratibořice</name></entity>';
    const ascii = '<entity><name>Jan Neruda</name></entity>';
    await insert(1, czech);
    await insert(2, ascii);
    await insert(3, null);

    await orm.migrator.up({ to: MIGRATION });
    const { rows } = await client.query<{ id: string; document_bytes: string | null }>('select id, document_bytes from entity order by id');
    expect(rows.map((row) => row.document_bytes)).toEqual([Buffer.from(czech, 'utf8').toString('latin1'), ascii, null]);

    // The trigger now clears the renamed column when the record changes without it.
    await client.query(`update entity set record = '{"changed": true}' where id = 2`);
    expect((await client.query('select document_bytes from entity where id = 2')).rows[0].document_bytes).toBeNull();

    await orm.migrator.down({ to: BEFORE });
    const back = await client.query<{ document: string | null }>('select document from entity order by id');
    expect(back.rows.map((row) => row.document)).toEqual([czech, null, null]);
  });
});
