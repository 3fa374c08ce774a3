import { defineConfig } from '@mikro-orm/postgresql';
import { userInfo } from 'node:os';
import { Migrator } from '@mikro-orm/migrations';
import { BatchSchema } from './entities/batch.ts';
import { ExportRequestSchema } from './entities/export-request.ts';

export const DEFAULT_POOL_SIZE = 10;

export interface PoolOptions {
  /** Connections of the pool (default 10). */
  size?: number;
  /** How long a caller waits for a connection when all are taken; undefined: as long as it takes. */
  acquireTimeoutMs?: number;
}

// The one ORM configuration: the app, the worker, the tests and the MikroORM
// CLI (package.json "mikro-orm".configPaths) all read it. Hot paths (bulk
// apply, streamed reads) use SQL on the same connection pool.
export function ormConfig(databaseUrl = process.env.DATABASE_URL ?? 'postgres://localhost:5432/entity_records', pool: PoolOptions = {}) {
  return defineConfig({
    clientUrl: withDatabaseUser(databaseUrl),
    entities: [BatchSchema, ExportRequestSchema],
    extensions: [Migrator],
    migrations: {
      path: new URL('../migrations', import.meta.url).pathname,
      glob: '!(*.d).ts',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    pool: { min: 0, max: pool.size ?? DEFAULT_POOL_SIZE },
    // Waiting for a pooled connection longer than this fails (the API answers 503) instead of hanging.
    ...(pool.acquireTimeoutMs ? { driverOptions: { connectionTimeoutMillis: pool.acquireTimeoutMs } } : {}),
    debug: false,
  });
}

/**
 * libpq falls back to the OS user when a URL names none; node-postgres and
 * MikroORM do not always (USER may be unset), so the URL is completed here.
 */
export function withDatabaseUser(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (!url.username) url.username = encodeURIComponent(process.env.PGUSER || userInfo().username);
  return url.toString();
}

export default ormConfig();
