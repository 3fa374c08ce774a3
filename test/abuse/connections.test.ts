import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { checkConnectionBudget } from '../../services/limits/connections.ts';

// The API's processes and pools are checked against the database's
// max_connections at start: a configuration it cannot serve stops the start
// with a message that says what to change.

describe('connections checked at start', () => {
  const config = (processes: number) =>
    loadConfig({ DATABASE_URL: inject('databaseUrl'), DATA_DIR: inject('scratchDir'), API_PROCESSES: String(processes) });

  it('accepts processes and pools the database can serve', async () => {
    const budget = await checkConnectionBudget(config(1));
    expect(budget.needed).toBe(14);
    expect(budget.available).toBeGreaterThanOrEqual(14);
  });

  it('refuses one process per core of a large host beyond max_connections, naming the settings', async () => {
    await expect(checkConnectionBudget(config(1024))).rejects.toThrow(
      /API_PROCESSES=1024 × \(DB_POOL_SIZE=10 \+ LONG_READ_CONNECTIONS=4\).*max_connections/,
    );
  });
});
