import { migrate, type Orm } from './orm.ts';

/** What a reset removed. */
export interface ResetOutcome {
  entities: number;
  batches: number;
  /** The exports whose rows are gone: their files are the caller's to delete. */
  exportIds: string[];
}

/** Host names that mean this machine (an empty one is libpq's Unix socket). */
const LOCAL_HOSTS = new Set(['', 'localhost', '127.0.0.1', '[::1]', '::1']);

/** Whether `databaseUrl` names a database on this machine: a reset refuses any other. */
export function isLocalDatabase(databaseUrl: string): boolean {
  const url = new URL(databaseUrl);
  const socket = url.searchParams.get('host');
  return LOCAL_HOSTS.has(url.hostname) && (socket === null || socket.startsWith('/'));
}

/**
 * Empties the service's database as if it had just been created: the schema
 * is dropped, then every migration applied again. An API or worker running
 * meanwhile keeps its connections and finds the new, empty database: records
 * numbered from 1 again, the genesis transaction in place, no batch id taken
 * (a request in the moment between the two steps fails). The migrator keeps
 * its own table on a connection of its own, so the two steps cannot share
 * one transaction.
 */
export async function resetDatabase(orm: Orm): Promise<ResetOutcome> {
  const outcome = await orm.em.fork().transactional(async (em) => {
    // A database created but never migrated has nothing to count.
    const [{ migrated }] = await em.execute<[{ migrated: boolean }]>(`select to_regclass('public.export_request') is not null as migrated`);
    const count = async (table: string) =>
      migrated ? Number((await em.execute<{ n: string }[]>(`select count(*) as n from ${table}`))[0]!.n) : 0;
    const removed: ResetOutcome = {
      entities: await count('entity'),
      batches: await count('batch'),
      exportIds: migrated ? (await em.execute<{ id: string }[]>('select id from export_request')).map((row) => row.id) : [],
    };
    await em.execute('drop schema public cascade');
    await em.execute('create schema public');
    return removed;
  });
  await migrate(orm);
  return outcome;
}
