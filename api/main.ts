import { once } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config.ts';
import { openOrm } from '../db/orm.ts';
import { createLogger } from '../logger.ts';
import { runUntilSignalled } from '../scripts/lib/process.ts';
import { buildApp } from './app.ts';

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'api');
const orm = await openOrm(config.DATABASE_URL);
const connection = await Connection.connect({ address: config.temporalAddress });
const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
const app = buildApp({ config, orm, temporal, log });
const server = app.listen(config.PORT, config.HOST);
await once(server, 'listening');
log.info({ url: `http://${config.HOST}:${config.PORT}` }, 'api listening');

await runUntilSignalled(
  () => once(server, 'close').then(() => undefined),
  () => {
    server.close();
    server.closeIdleConnections();
  },
);
await connection.close();
await orm.close();
log.info('api stopped');
