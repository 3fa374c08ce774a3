import { once } from 'node:events';
import { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import { ValidationPool } from '../engine/validation/index.ts';
import type { Logger } from '../logger.ts';
import { runUntilSignalled } from '../platform/signals.ts';
import { ensureTemporalSetup, sweepStrandedJobs } from '../services/batches/recovery.ts';
import { openApiDb } from '../services/deps.ts';
import { checkConnectionBudget } from '../services/limits/connections.ts';
import { lazyClientConnection } from '../temporal/client/lazy-connection.ts';
import { buildApp } from './app.ts';
import { loadTokens } from './auth/tokens.ts';
import { generatedMetricsTokenFile, metricsToken } from './metrics.ts';
import { clusterMetrics, onStopRequest } from './cluster.ts';
import { startTracing } from '../metrics/tracing.ts';

/** How long a start waits for Temporal before it serves without it. */
const PREPARE_TIMEOUT_MS = 10_000;

/**
 * What is done once per start, however many API processes serve: the search
 * attributes and the expiry schedule in Temporal, and the admin token
 * generated (and announced) on a first start without AUTH_TOKENS. Temporal
 * away does not stop the start: the APIs serve what PostgreSQL answers, and
 * the recovery sweep creates what is missing once Temporal answers.
 */
export async function prepareApi(config: Config, log: Logger): Promise<void> {
  const connections = await checkConnectionBudget(config);
  if (connections.needed > connections.available / 2)
    log.warn(
      connections,
      'the API alone may use more than half of the database connections; the workers and other API machines need theirs',
    );
  const { connection, close } = lazyClientConnection(config);
  try {
    const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
    await temporal.withDeadline(Date.now() + PREPARE_TIMEOUT_MS, () => ensureTemporalSetup({ config, temporal }));
  } catch (error) {
    log.warn(
      { err: error, temporal: config.temporalAddress },
      'Temporal does not answer: serving without it; batches submitted meanwhile start once it does',
    );
  } finally {
    // Not awaited: a retry still scheduled would hold the start for up to one retry interval.
    close().catch((error: unknown) => log.warn({ err: error }, 'closing the connection to Temporal failed'));
  }
  // Made once here, before the processes of a cluster read it.
  metricsToken(config);
  const metricsFile = generatedMetricsTokenFile(config);
  if (metricsFile) log.info({ file: metricsFile }, 'GET /metrics answers a scraper sending the token in this file (or set METRICS_TOKEN)');
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
  const db = await openApiDb(config, log);
  // Lazy: an API started while Temporal is away serves reads, and connects once Temporal answers.
  const temporalConnection = lazyClientConnection(config);
  const { connection } = temporalConnection;
  const tracing = await startTracing(config.OTEL_EXPORTER_OTLP_ENDPOINT, 'entity-records-api');
  const temporal = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    ...(tracing ? { interceptors: { workflow: [tracing.clientInterceptor] } } : {}),
  });
  const tokens = config.AUTH_DISABLED ? 'disabled' : loadTokens(config, () => undefined);
  const validation = new ValidationPool({
    threads: config.VALIDATION_THREADS,
    onThreadLost: (error) => log.error({ err: error }, 'a validation thread stopped; the uploads it held were answered 503'),
  });
  const app = buildApp({
    config,
    db,
    temporal,
    log,
    validation,
    tokens,
    tracer: tracing?.tracer,
    ...(options.inCluster ? { metricsSource: clusterMetrics } : {}),
  });
  // With PROXY_PROTOCOL on, this server reads each connection's PROXY header before HTTP (api/app.ts, api/proxy-protocol.ts).
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
    // Push streams end (their clients resume elsewhere with Last-Event-ID) so that the server can close.
    void db.commits.close();
    server.close();
    server.closeIdleConnections();
  };
  if (stopAsked) stop();
  await runUntilSignalled(() => once(server, 'close').then(() => undefined), stop);
  stopSweeping();
  await validation.close();
  await tracing?.shutdown();
  await temporalConnection.close();
  await db.close();
  // The channel to the primary would keep this process alive.
  if (options.inCluster) process.disconnect();
  else log.info('api stopped');
}
