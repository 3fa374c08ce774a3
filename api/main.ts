import { once } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config.ts';
import { openOrm } from '../db/orm.ts';
import { createLogger } from '../logger.ts';
import { runUntilSignalled } from '../scripts/lib/process.ts';
import { sweepStrandedJobs } from '../services/batches/recovery.ts';
import { registerSearchAttributes } from '../temporal/register.ts';
import { ensureExpirySchedule } from '../temporal/schedules.ts';
import { buildApp } from './app.ts';
import { loadTokens } from './auth/tokens.ts';

const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'api');
const orm = await openOrm(config.DATABASE_URL);
const connection = await Connection.connect({ address: config.temporalAddress });
const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
await registerSearchAttributes(connection, config.TEMPORAL_NAMESPACE);
await ensureExpirySchedule(temporal, { taskQueue: config.TEMPORAL_TASK_QUEUE, everyMs: config.EXPORT_EXPIRY_EVERY_MINUTES * 60_000 });
if (config.AUTH_DISABLED) log.warn('AUTH_DISABLED=true: every request is treated as an admin; never do this outside local experiments');
const tokens = config.AUTH_DISABLED ? 'disabled' : loadTokens(config, (line) => process.stdout.write(`${line}\n`));
const app = buildApp({ config, orm, temporal, log, tokens });
const server = app.listen(config.PORT, config.HOST);
// An upload may wait for a slot (UPLOAD_MAX_CONCURRENT) behind others before its
// body is read; Node's default of 300 s for a whole request answered 408 to
// uploads queued behind a dozen large ones on a loaded machine.
server.requestTimeout = 30 * 60 * 1000;
await once(server, 'listening');
log.info({ url: `http://${config.HOST}:${config.PORT}` }, 'api listening');
const stopSweeping = sweepStrandedJobs({ config, orm, temporal, log });

await runUntilSignalled(
  () => once(server, 'close').then(() => undefined),
  () => {
    server.close();
    server.closeIdleConnections();
  },
);
stopSweeping();
await connection.close();
await orm.close();
log.info('api stopped');
