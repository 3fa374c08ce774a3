import pg from 'pg';
import { withDatabaseUser } from './mikro-orm.config.ts';

/** Connections the database accepts from ordinary roles: max_connections less those reserved for superusers. */
export async function connectionsAvailable(databaseUrl: string): Promise<{ max: number; reserved: number }> {
  const client = new pg.Client({ connectionString: withDatabaseUser(databaseUrl) });
  await client.connect();
  try {
    const { rows } = await client.query<{ max: number; reserved: number }>(
      `select current_setting('max_connections')::int as max, current_setting('superuser_reserved_connections')::int as reserved`,
    );
    return rows[0]!;
  } finally {
    await client.end();
  }
}
