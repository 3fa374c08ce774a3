import { once } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { runUntilSignalled } from '../scripts/lib/process.ts';
import { sweepStrandedJobs } from '../services/batches/recovery.ts';
import { checkConnectionBudget } from '../services/limits/connections.ts';
import { openApiDb } from '../services/deps.ts';
import { registerSearchAttributes } from '../temporal/client/register.ts';
import { ensureExpirySchedule } from '../temporal/client/schedules.ts';
import { buildApp } from './app.ts';
import { loadTokens } from './auth/tokens.ts';
import { clusterMetrics, onStopRequest } from './cluster.ts';

/**
 * What is done once per start, however many API processes serve: the search
 * attributes and the expiry schedule in Temporal, and the admin token
 * generated (and announced) on a first start without AUTH_TOKENS.
 */
export async function prepareApi(config: Config, log: Logger): Promise<void> {
  const connections = await checkConnectionBudget(config);
  if (connections.needed > connections.available / 2) log.warn(connections, 'the API alone may use more than half of the database connections; the workers and other API machines need theirs');
  const connection = await Connection.connect({ address: config.temporalAddress });
  try {
    await registerSearchAttributes(connection, config.TEMPORAL_NAMESPACE);
    const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
    await ensureExpirySchedule(temporal, { taskQueue: config.TEMPORAL_TASK_QUEUE, everyMs: config.EXPORT_EXPIRY_EVERY_MINUTES * 60_000 });
  } finally {
    await connection.close();
  }
  if (config.AUTH_DISABLED) log.warn('AUTH_DISABLED=true: every request is treated as an admin; never do this outside local experiments');
  else loadTokens(config, (line) => process.stdout.write(`${line}\n`));
}

export interface ServeOptions {
  /** A process of the cluster (api/cluster.ts): its primary prepared the start and answers /metrics for all of them. */
  inCluster: boolean;
  /** Whether this process sweeps stranded jobs: one process of a cluster is enough. */
  sweep: boolean;
}

/** One API process: listens on PORT until SIGINT/SIGTERM (or its cluster primary) stops it. */
export async function serveApi(config: Config, log: Logger, options: ServeOptions): Promise<void> {
  // Asked before the server listens, the stop waits for it.
  let stopAsked = false;
  let stop = () => {
    stopAsked = true;
  };
  if (options.inCluster) onStopRequest(() => stop());
  const db = await openApiDb(config);
  const connection = await Connection.connect({ address: config.temporalAddress });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const tokens = config.AUTH_DISABLED ? 'disabled' : loadTokens(config, () => undefined);
  const app = buildApp({ config, db, temporal, log, tokens, ...(options.inCluster ? { metricsSource: clusterMetrics } : {}) });
  const server = app.listen(config.PORT, config.HOST);
  // An upload may wait for a slot (UPLOAD_MAX_CONCURRENT) behind others before its
  // body is read; Node's default of 300 s for a whole request answered 408 to
  // uploads queued behind a dozen large ones on a loaded machine.
  server.requestTimeout = 30 * 60 * 1000;
  await once(server, 'listening');
  if (!options.inCluster) log.info({ url: `http://${config.HOST}:${config.PORT}`, processes: 1 }, 'api listening');
  const stopSweeping = options.sweep ? sweepStrandedJobs({ config, db, temporal, log }) : () => undefined;

  let stopping = false;
  stop = () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeIdleConnections();
  };
  if (stopAsked) stop();
  await runUntilSignalled(() => once(server, 'close').then(() => undefined), stop);
  stopSweeping();
  await connection.close();
  await db.close();
  // The channel to the primary would keep this process alive.
  if (options.inCluster) process.disconnect();
  else log.info('api stopped');
}
