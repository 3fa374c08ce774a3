import type pg from 'pg';
import { revisionStore, type RevisionStore } from './apply/index.ts';
import { openOrm, type Orm } from './orm.ts';

/**
 * The data-access layer as the rest of the service holds it: the ORM (its
 * EntityManager for the job rows, its migrator) and, for db/'s own modules
 * only, the pg pool behind it (COPY, cursors, the hot reads). Use cases take
 * this, never a pool; repositories join it as they move into db/.
 */
export interface Db {
  readonly orm: Orm;
  /** MikroORM's own pg pool: for db/ modules, not for callers outside db/. */
  readonly pool: pg.Pool;
  /** Applying batches: the apply's statements on a transaction (db/apply/). */
  readonly revisions: RevisionStore;
  /** One round trip to the database; throws when it does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openDb(databaseUrl: string): Promise<Db> {
  return dbOver(await openOrm(databaseUrl));
}

/** The data-access layer over an ORM already open (tests that open their own). */
export async function dbOver(orm: Orm): Promise<Db> {
  const pool: pg.Pool = await orm.em.getConnection().getNativeClient();
  return {
    orm,
    pool,
    revisions: revisionStore(pool),
    async ping() {
      await pool.query('select 1');
    },
    close: () => orm.close(),
  };
}
