import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { freePort } from '../platform/ports.ts';

// The Temporal SDK's runtime of a worker process: its core's logs go through
// the service's logger, and its metrics (workflow task failures,
// schedule-to-start latency, slots, polls, sticky cache) are exported in
// Prometheus' format on a loopback port that the worker's own /metrics
// appends (metrics/worker.ts), so one scrape target has both.

/** An activity-only process (the interactive lane) polls no workflow tasks by design: that warning is noise. */
const ACTIVITY_ONLY_WARNING = 'No workflows registered, not polling for workflow tasks';

export interface InstalledRuntime {
  /** Where the core's Prometheus metrics answer, when WORKER_METRICS_PORT asked for metrics. */
  metricsUrl?: string;
}

/** Installs the runtime; before any connection to Temporal is made. */
export async function installTemporalRuntime(
  config: Pick<Config, 'WORKER_METRICS_PORT' | 'LOG_LEVEL'>,
  log: Logger,
): Promise<InstalledRuntime> {
  const metricsPort = config.WORKER_METRICS_PORT === undefined ? undefined : await freePort();
  Runtime.install({
    logger: new DefaultLogger('INFO', ({ level, message, meta }) => {
      if (message === ACTIVITY_ONLY_WARNING) return;
      const fields = { sdk: meta };
      if (level === 'ERROR') log.error(fields, message);
      else if (level === 'WARN') log.warn(fields, message);
      else log.debug(fields, message);
    }),
    telemetryOptions: {
      // The core's own logs (polling, task failures, nondeterminism) forwarded to the logger above, not printed raw.
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(metricsPort === undefined
        ? {}
        : { metrics: { prometheus: { bindAddress: `127.0.0.1:${metricsPort}`, useSecondsForDurations: true } } }),
    },
  });
  return metricsPort === undefined ? {} : { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
}
