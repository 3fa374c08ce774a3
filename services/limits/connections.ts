import type { Config } from '../../config.ts';
import { connectionsAvailable } from '../../db/connection-limits.ts';

// The API's processes and pools must fit the database's max_connections:
// one process per core with 10 + 4 connections each is 224 on a 16-core
// host, above PostgreSQL's default of 100. Checked once at start, with a
// message that says what to change, instead of failing under load later.

class ConnectionBudgetError extends Error {}

/** The connections this API may open (API_PROCESSES × both pools); throws when the database cannot accept them. */
export async function checkConnectionBudget(config: Config): Promise<{ needed: number; available: number }> {
  const perProcess = config.DB_POOL_SIZE + config.LONG_READ_CONNECTIONS;
  const needed = config.API_PROCESSES * perProcess;
  const { max, reserved } = await connectionsAvailable(config.DATABASE_URL);
  const available = max - reserved;
  if (needed > available) {
    throw new ConnectionBudgetError(
      `the API would open up to ${needed} database connections (API_PROCESSES=${config.API_PROCESSES} × (DB_POOL_SIZE=${config.DB_POOL_SIZE} + LONG_READ_CONNECTIONS=${config.LONG_READ_CONNECTIONS})), ` +
        `but the database accepts ${available} (max_connections=${max} less ${reserved} reserved), before the workers' and other machines' pools: ` +
        'lower API_PROCESSES or the pool sizes, raise max_connections, or put PgBouncer in between (docs/deployment.md)',
    );
  }
  return { needed, available };
}
