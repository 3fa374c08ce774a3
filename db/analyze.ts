import pg from 'pg';
import { withDatabaseUser } from './mikro-orm.config.ts';
import { inTransaction } from './sql.ts';

// Planner statistics refreshed after large writes. PostgreSQL advises an
// ANALYZE after a bulk load: until autovacuum gets to it (never, where it is
// off), the planner estimates a table it last saw empty, and the hot reads can
// flip to sequential scans and sorts of the whole registry.

/** The tables an applied batch writes rows into, in proportion to its records. */
export const BATCH_WRITTEN_TABLES = [
  'entity',
  'revision',
  'transaction',
  'search_value',
  'entity_participant',
  'search_user_role',
  'name_word',
  'name_vocabulary',
] as const;

interface AnalyzeOutcome {
  analyzed: string[];
  /** Tables another session was analyzing at that moment (its statistics are as new as ours would be). */
  skipped: string[];
}

/** Refreshes the planner statistics of the service's tables. */
export interface Analyzer {
  /**
   * ANALYZE each of `tables`, one after another, each bounded by
   * `statementTimeoutMs`. At most one at a time per table across every
   * worker: a table another session is analyzing is skipped, not waited for
   * (ANALYZE of one table by two sessions would queue on its lock for nothing).
   */
  analyze(tables: readonly string[], statementTimeoutMs: number): Promise<AnalyzeOutcome>;
}

export function analyzer(pool: pg.Pool): Analyzer {
  return {
    async analyze(tables, statementTimeoutMs) {
      const outcome: AnalyzeOutcome = { analyzed: [], skipped: [] };
      for (const table of tables) {
        const ran = await inTransaction(pool, async (client) => {
          await client.query(`select set_config('statement_timeout', $1, true)`, [String(statementTimeoutMs)]);
          const { rows } = await client.query<{ locked: boolean }>(
            `select pg_try_advisory_xact_lock(hashtextextended('analyze:' || $1, 0)) as locked`,
            [table],
          );
          if (!rows[0]!.locked) return false;
          await client.query(`analyze ${pg.escapeIdentifier(table)}`);
          return true;
        });
        (ran ? outcome.analyzed : outcome.skipped).push(table);
      }
      return outcome;
    },
  };
}

/** ANALYZE of every table of the database at `databaseUrl` (after a restore, all of them are new to the planner); how many. */
export async function analyzeEveryTable(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: withDatabaseUser(databaseUrl) });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = current_schema()`);
    for (const { name } of rows) await client.query(`analyze ${pg.escapeIdentifier(name)}`);
    return rows.length;
  } finally {
    await client.end();
  }
}
