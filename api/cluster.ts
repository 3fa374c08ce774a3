import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

// API_PROCESSES processes of api/main.ts on one port (node:cluster: the
// primary accepts connections and hands them out in turn). The primary
// serves no request: it forks the processes, re-forks one that dies (the
// others keep serving), stops them all on SIGINT/SIGTERM, and gathers
// /metrics from all of them. Whatever the processes must agree on (replay
// guard, submission rate limit) lives in PostgreSQL, not here.

const STOP = 'entity-records:stop';
const METRICS = 'entity-records:metrics';
/** The slot a process fills (0 … API_PROCESSES − 1); slot 0 sweeps stranded jobs. */
const SLOT_VARIABLE = 'API_PROCESS_SLOT';

/** A process that lived this long before it died is restarted at once; quicker deaths back off. */
const STABLE_AFTER_MS = 10_000;
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 30_000;
const METRICS_TIMEOUT_MS = 10_000;

interface Slot {
  worker?: Worker;
  /** Whether its server listens (else it is starting, and a signal stops it). */
  listening: boolean;
  startedAt: number;
  /** Deaths in a row, each before STABLE_AFTER_MS. */
  quickDeaths: number;
  restart?: NodeJS.Timeout;
}

/** The delay before a slot's process is forked again after `quickDeaths` deaths in a row: 0, then doubling up to 30 s. */
export function restartDelay(quickDeaths: number): number {
  if (quickDeaths === 0) return 0;
  return Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (quickDeaths - 1));
}

/**
 * The primary: forks config.API_PROCESSES processes and keeps them running
 * until a signal. Resolves when all have stopped; exits the process with 1
 * when one of them fails before all have started (a configuration or
 * database problem, which no restart would cure).
 */
export async function runApiCluster(config: Config, log: Logger): Promise<void> {
  const count = config.API_PROCESSES;
  const slots: Slot[] = Array.from({ length: count }, () => ({ listening: false, startedAt: 0, quickDeaths: 0 }));
  const aggregator = new AggregatorRegistry();
  let listening = 0;
  let started = false;
  let stopping = false;
  let allStopped: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    allStopped = resolve;
  });

  const live = () => slots.filter((slot) => slot.worker !== undefined).length;
  const fork = (index: number) => {
    const slot = slots[index]!;
    slot.restart = undefined;
    slot.listening = false;
    slot.startedAt = Date.now();
    slot.worker = cluster.fork({ [SLOT_VARIABLE]: String(index) });
  };
  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    for (const slot of slots) {
      clearTimeout(slot.restart);
      // One still starting may not listen for messages yet; it has nothing to finish either.
      if (slot.listening) slot.worker?.send({ type: STOP }, undefined, () => undefined);
      else slot.worker?.process.kill('SIGTERM');
    }
    if (live() === 0) allStopped();
  };

  cluster.on('listening', (worker) => {
    const slot = slots.find((candidate) => candidate.worker === worker);
    if (slot) slot.listening = true;
    listening += 1;
    if (!started && listening === count) {
      started = true;
      log.info({ url: `http://${config.HOST}:${config.PORT}`, processes: count }, 'api listening');
    }
  });
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== METRICS) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS, id: message.id, text }),
      (error: unknown) => worker.send({ type: METRICS, id: message.id, error: String(error) }),
    );
  });
  cluster.on('exit', (worker, code, signal) => {
    const index = slots.findIndex((slot) => slot.worker === worker);
    const slot = slots[index];
    if (!slot) return;
    slot.worker = undefined;
    if (stopping) {
      if (live() === 0) allStopped();
      return;
    }
    const how = signal ?? `code ${code}`;
    if (!started) {
      log.error({ processPid: worker.process.pid, exit: how }, 'an API process failed during start-up; stopping the others');
      process.exitCode = 1;
      stopAll();
      return;
    }
    slot.quickDeaths = Date.now() - slot.startedAt < STABLE_AFTER_MS ? slot.quickDeaths + 1 : 0;
    const delay = restartDelay(slot.quickDeaths);
    log.error(
      { processPid: worker.process.pid, exit: how, slot: index, restartInMs: delay },
      'an API process exited; starting another in its place',
    );
    slot.restart = setTimeout(() => fork(index), delay);
  });

  const received = new Set<NodeJS.Signals>();
  const onSignal = (signal: NodeJS.Signals) => {
    // The same signal again: the operator insists. A different one is not
    // insistence: Ctrl-C under npm start sends SIGINT to the whole process
    // group, then npm start sends SIGTERM.
    if (received.has(signal)) {
      for (const slot of slots) slot.worker?.process.kill('SIGKILL');
      process.exit(130);
    }
    received.add(signal);
    stopAll();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  for (let index = 0; index < count; index += 1) fork(index);
  await stopped;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  log.info({ processes: count }, 'api stopped');
}

/** In a process of the cluster: calls `stop` when the primary asks, or when the primary is gone. */
export function onStopRequest(stop: () => void): void {
  process.on('message', (message: { type?: string }) => {
    if (message?.type === STOP) stop();
  });
  process.once('disconnect', stop);
}

export type MetricsSource = Pick<Registry, 'contentType' | 'metrics'>;

/**
 * In a process of the cluster: /metrics answers for every process of the
 * cluster (counts summed, database-wide figures once), gathered by the
 * primary, whichever process the scrape reached.
 */
export function clusterMetrics(local: Registry): MetricsSource {
  AggregatorRegistry.setRegistries([local]);
  // Constructed for its side effect: it answers the primary's requests for this process's metrics.
  new AggregatorRegistry();
  let next = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on('message', (message: { type?: string; id?: number; text?: string; error?: string }) => {
    if (message?.type !== METRICS || message.id === undefined) return;
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiting?.reject(new Error(message.error));
    else waiting?.resolve(message.text ?? '');
  });
  return {
    contentType: local.contentType,
    metrics: () =>
      new Promise<string>((resolve, reject) => {
        const id = next++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error('the cluster primary did not answer with the metrics'));
        }, METRICS_TIMEOUT_MS);
        pending.set(id, {
          resolve: (text) => {
            clearTimeout(timer);
            resolve(text);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        process.send!({ type: METRICS, id });
      }),
  } as MetricsSource;
}
