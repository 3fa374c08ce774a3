import type { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { Orm } from '../db/orm.ts';
import type { Logger } from '../logger.ts';
import type { TokenRegistry } from './auth/tokens.ts';

/** Everything the HTTP layer needs, built by the entry point (or a test) and passed in. */
export interface AppDeps {
  config: Config;
  orm: Orm;
  temporal: Client;
  log: Logger;
  /** Bearer tokens, or 'disabled' when AUTH_DISABLED=true opened the service on purpose. */
  tokens: TokenRegistry | 'disabled';
}
