import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { withDatabaseUser } from './mikro-orm.config.ts';
import { ensureDatabase } from './orm.ts';

// Backup and restore of the service's database with PostgreSQL's own tools.
// pg_dump reads one consistent snapshot while the service runs (imports
// included: a batch is one transaction, so it is in the backup whole or not
// at all). A restore goes into a fresh database and then moves the record
// number sequence past anything the registry can have issued since the
// backup, so that no number is ever given to a second record.

const run = promisify(execFile);

/** Writes a backup of `databaseUrl` to `file` (pg_dump's custom format). */
export async function backupDatabase(databaseUrl: string, file: string): Promise<void> {
  await run(
    'pg_dump',
    ['--format=custom', '--no-owner', '--no-privileges', `--file=${file}`, `--dbname=${withDatabaseUser(databaseUrl)}`],
    { maxBuffer: 16 * 2 ** 20 },
  );
}

export interface RestoreOutcome {
  /** The highest record number in the backup. */
  highestInBackup: number;
  /** The number the next new record gets. */
  nextRecordNumber: number;
}

/**
 * Restores `file` into `databaseUrl`, which must be empty or not exist, then
 * moves the record numbers on: the next one is past the backup's highest by
 * `gap` (records the registry may have created after the backup), and past
 * `issuedUpTo` when the last number issued is known.
 */
export async function restoreDatabase(
  databaseUrl: string,
  file: string,
  options: { gap: number; issuedUpTo?: number },
): Promise<RestoreOutcome> {
  await ensureDatabase(databaseUrl);
  const client = new pg.Client({ connectionString: withDatabaseUser(databaseUrl) });
  await client.connect();
  try {
    const { rows } = await client.query<{ tables: string }>(`select count(*) as tables from pg_tables where schemaname = 'public'`);
    if (Number(rows[0]!.tables) > 0) throw new Error('the database to restore into has tables already: restore into a fresh database');
    await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', `--dbname=${withDatabaseUser(databaseUrl)}`, file], {
      maxBuffer: 16 * 2 ** 20,
    });
    return await moveRecordNumbersPast(client, options);
  } finally {
    await client.end();
  }
}

/** Sets entity_id_seq so that the next record number is past every number the registry can have issued. */
async function moveRecordNumbersPast(client: pg.ClientBase, options: { gap: number; issuedUpTo?: number }): Promise<RestoreOutcome> {
  const { rows } = await client.query<{ highest: string; next: string }>(
    `with highest as (
       select greatest((select case when is_called then last_value else last_value - 1 end from entity_id_seq), coalesce((select max(id) from entity), 0)) as n
     )
     select n as highest, setval('entity_id_seq', greatest(n + $1::bigint, coalesce($2::bigint, 0))) + 1 as next from highest`,
    [options.gap, options.issuedUpTo ?? null],
  );
  return { highestInBackup: Number(rows[0]!.highest), nextRecordNumber: Number(rows[0]!.next) };
}
