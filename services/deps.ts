import type { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import { openDb, type Db, type DbOptions } from '../db/index.ts';
import type { BatchValidators } from '../engine/validation/index.ts';
import type { Logger } from '../logger.ts';

/** The database as an API process holds it (for api/serve.ts, which imports nothing from db/): its pool sizes, the acquire timeout, and long reads on a bounded pool of their own. */
export function openApiDb(config: Config, log?: Logger): Promise<Db> {
  return openDb(config.DATABASE_URL, apiDbOptions(config, log));
}

function apiDbOptions(config: Config, log: Logger | undefined): DbOptions {
  return {
    log,
    pool: { size: config.DB_POOL_SIZE, acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS },
    longReads: {
      connections: config.LONG_READ_CONNECTIONS,
      statementTimeoutMs: config.LONG_READ_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: config.LONG_READ_IDLE_TIMEOUT_MS,
    },
    feedRangeRetentionDays: config.FEED_RANGE_RETENTION_DAYS,
    feedRangeAnchorEvery: config.FEED_RANGE_ANCHOR_EVERY,
    standbys: { urls: config.DATABASE_READ_URLS, maxLagSeconds: config.REPLICA_MAX_LAG },
  };
}

/** What the use cases need: configuration, the database, the workflow engine and a logger (nothing of HTTP). */
export interface ServiceDeps {
  config: Config;
  db: Db;
  temporal: Client;
  log: Logger;
  /**
   * The API process's validation threads, which validate uploads off its
   * event loop. Absent where deps are built for one task (a test of
   * something else, a script): uploads are then validated on the caller's thread.
   */
  validation?: BatchValidators;
}
