import type { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Logger } from '../logger.ts';

/** What the use cases need: configuration, the database, the workflow engine and a logger (nothing of HTTP). */
export interface ServiceDeps {
  config: Config;
  db: Db;
  temporal: Client;
  log: Logger;
}
