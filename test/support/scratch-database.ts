// A database of a test's own beside the run's: named after it, migrated or
// restored into by the test, dropped at its end. A test that reads the whole
// registry (a snapshot export, a stream followed from its first page) uses
// one, so that its cost does not grow with every other file's records.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { ensureDatabase, migrate, openOrm } from '../../db/orm.ts';

/** The URL of database `{run's database}_{suffix}` (not created). */
export function scratchDatabaseUrl(suffix: string): string {
  const url = new URL(inject('databaseUrl'));
  url.pathname = `${url.pathname}_${suffix}`;
  return url.toString();
}

export async function dropScratchDatabase(databaseUrl: string): Promise<void> {
  const admin = new URL(withDatabaseUser(databaseUrl));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists ${pg.escapeIdentifier(new URL(databaseUrl).pathname.slice(1))} with (force)`);
  } finally {
    await client.end();
  }
}

/** A new, migrated, empty database named after `suffix` and a random tail; `drop` removes it. */
export async function migratedScratchDatabase(suffix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const url = scratchDatabaseUrl(`${suffix}_${randomBytes(4).toString('hex')}`);
  await ensureDatabase(url);
  const orm = await openOrm(url);
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  return { url, drop: () => dropScratchDatabase(url) };
}
