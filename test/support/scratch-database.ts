// A database of a test's own beside the run's: named after it, migrated or
// restored into by the test, dropped at its end.
import pg from 'pg';
import { inject } from 'vitest';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';

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
