import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { CancelledFailure } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

// A worker's own metrics, served on WORKER_METRICS_PORT when it is set:
// activity durations and the process's. Outcome counts of batches and
// exports are the API's (read from the database), not the worker's.

export interface WorkerMetrics {
  registry: Registry;
  /** Times every activity execution (each attempt) by activity type and outcome. */
  activityInterceptor: ActivityInterceptorsFactory;
}

/** From a status update to an hour-long export. */
const ACTIVITY_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'activity_duration_seconds',
    help: 'Activity executions on this worker by activity type and outcome (completed, failed, cancelled)',
    labelNames: ['activity', 'outcome'] as const,
    buckets: ACTIVITY_BUCKETS,
    registers: [registry],
  });
  const activityInterceptor: ActivityInterceptorsFactory = (context) => ({
    inbound: {
      async execute(input, next) {
        const end = duration.startTimer({ activity: context.info.activityType });
        try {
          const result = await next(input);
          end({ outcome: 'completed' });
          return result;
        } catch (error) {
          end({ outcome: error instanceof CancelledFailure ? 'cancelled' : 'failed' });
          throw error;
        }
      },
    },
  });
  return { registry, activityInterceptor };
}

/** The Temporal SDK core's metrics text (worker/runtime.ts), or nothing when it does not answer: the worker's own series are served regardless. */
async function coreMetrics(url: string | undefined): Promise<string> {
  if (!url) return '';
  try {
    const answer = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return answer.ok ? await answer.text() : '';
  } catch {
    return '';
  }
}

/** A bare HTTP server answering GET /metrics from `registry` and the SDK core's `coreMetricsUrl`; 404 for anything else. */
export async function serveMetrics(registry: Registry, port: number, host: string, coreMetricsUrl?: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || new URL(request.url ?? '/', 'http://metrics').pathname !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    Promise.all([registry.metrics(), coreMetrics(coreMetricsUrl)])
      .then(([own, core]) => `${own}${own.endsWith('\n') ? '' : '\n'}${core}`)
      .then(
        (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

export interface RunningWorkerMetrics {
  activityInterceptor: ActivityInterceptorsFactory;
  url: string;
  close(): Promise<void>;
}

/** The worker's metrics with their server listening: what worker/main.ts starts when WORKER_METRICS_PORT is set. */
export async function startWorkerMetrics(port: number, host: string, coreMetricsUrl?: string): Promise<RunningWorkerMetrics> {
  const { registry, activityInterceptor } = createWorkerMetrics();
  const server = await serveMetrics(registry, port, host, coreMetricsUrl);
  return {
    activityInterceptor,
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
