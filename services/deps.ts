import type { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { Orm } from '../db/orm.ts';
import type { Logger } from '../logger.ts';

/** What the use cases need: configuration, the database, the workflow engine and a logger (nothing of HTTP). */
export interface ServiceDeps {
  config: Config;
  orm: Orm;
  temporal: Client;
  log: Logger;
}
