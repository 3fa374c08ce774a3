import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { ormConfig, withDatabaseUser, type PoolOptions } from './mikro-orm.config.ts';

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string, pool: PoolOptions = {}): Promise<Orm> {
  return MikroORM.init(ormConfig(databaseUrl, pool));
}

export async function migrate(orm: Orm): Promise<void> {
  await orm.migrator.up();
}

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(withDatabaseUser(databaseUrl));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}
