import type { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Logger } from '../logger.ts';

/** Opens the database handle ServiceDeps carry: for the entry points above services/ (api/serve.ts), which import nothing from db/. */
export { openDb } from '../db/index.ts';

/** What the use cases need: configuration, the database, the workflow engine and a logger (nothing of HTTP). */
export interface ServiceDeps {
  config: Config;
  db: Db;
  temporal: Client;
  log: Logger;
}
