// More workers and APIs than the stack's one each, and the worker to kill:
// the one that runs a job's activity right now (Temporal records its
// identity, pid@host, on the pending activity).
import { WORKER_NODE_FLAGS } from '../../../worker/node-flags.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Stack } from '../../../bench/lib/stack.ts';
import { projectRoot } from '../../../scripts/lib/temporal-binary.ts';
import { stopProcess } from '../../../scripts/lib/temporal-server.ts';
import { GiveUp, pollUntil } from '../../support/poll.ts';
import { check, type ScenarioContext } from './scenario.ts';

export interface ExtraProcess {
  process: ChildProcess;
  /** Set when it exited without being asked to. */
  crashed(): string | undefined;
  kill(signal: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/** Starts one more worker with the stack's environment (and `extraEnv`); its output goes to `<name>.log` in the stack's scratch directory. */
export function startExtraWorker(
  stack: Pick<Stack, 'env' | 'scratch'>,
  name = 'worker-2',
  extraEnv: Record<string, string> = {},
): ExtraProcess {
  return spawnChild(stack, 'worker', name, { ...stack.env, ...extraEnv });
}

/** Starts one more API on `port` with the stack's environment; resolves once /health answers. */
export async function startExtraApi(
  stack: Pick<Stack, 'env' | 'scratch'>,
  port: number,
  name = 'api-2',
): Promise<ExtraProcess & { url: string }> {
  const api = spawnChild(stack, 'api', name, { ...stack.env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  try {
    await pollUntil(
      async () => {
        const crashed = api.crashed();
        if (crashed) throw new GiveUp(crashed);
        // An error here is "not listening yet", retried.
        return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) })).ok ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `${name} to become healthy` },
    );
  } catch (error) {
    await api.stop();
    throw error;
  }
  return { ...api, url };
}

function spawnChild(stack: Pick<Stack, 'scratch'>, entry: 'worker' | 'api', name: string, env: NodeJS.ProcessEnv): ExtraProcess {
  const fd = openSync(join(stack.scratch, `${name}.log`), 'a');
  writeSync(fd, `--- ${name} started ${new Date().toISOString()}\n`);
  const flags = entry === 'worker' ? WORKER_NODE_FLAGS : [];
  const child = spawn(process.execPath, [...flags, resolve(projectRoot(), `${entry}/main.ts`)], { env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let expected = false;
  let crash: string | undefined;
  child.once('exit', (code, signal) => {
    if (!expected) crash = `${name} (pid ${child.pid}) exited unexpectedly: ${signal ?? `code ${code}`}`;
  });
  const kill = async (signal: NodeJS.Signals) => {
    expected = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (signal === 'SIGTERM') return stopProcess(child);
    const gone = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill(signal);
    await gone;
  };
  return { process: child, crashed: () => crash, kill, stop: () => kill('SIGTERM') };
}

/** The pid in a worker identity (`pid@host`, the SDK's default). */
export function pidOfIdentity(identity: string): number | undefined {
  const pid = Number(identity.split('@')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** SIGKILLs whichever of the two workers holds the job (the stack's or the extra one); returns which it was. */
export async function killHolder(
  stack: Pick<Stack, 'worker' | 'killWorker'>,
  extra: ExtraProcess,
  holderPid: number,
): Promise<'first' | 'second'> {
  if (holderPid === stack.worker.pid) {
    await stack.killWorker('SIGKILL');
    return 'first';
  }
  if (holderPid === extra.process.pid) {
    await extra.kill('SIGKILL');
    return 'second';
  }
  throw new Error(`the job is held by pid ${holderPid}, neither worker (${stack.worker.pid}, ${extra.process.pid})`);
}

/** The heartbeat timeout (15 s) and the retry's backoff bound when the other worker takes a job over. */
const TAKEOVER_WITHIN_S = 30;

/**
 * After the worker running job `jobId` was killed at `killedAt`: waits until
 * the other worker runs its activity again (attempt 2 or later, or the job
 * `completed` before that was seen), and checks it did within TAKEOVER_WITHIN_S.
 */
export async function checkTakeover(
  { workflows, figures, log }: Pick<ScenarioContext, 'workflows' | 'figures' | 'log'>,
  job: 'batch' | 'export',
  jobId: string,
  completed: () => Promise<boolean>,
  killedAt: number,
): Promise<void> {
  const takeover = await pollUntil(
    async () => {
      const started = await workflows.startedActivity(jobId);
      if (started && started.attempt >= 2) return started;
      return (await completed()) ? { worker: 'finished before it was seen', attempt: 0 } : undefined;
    },
    { timeoutMs: 2 * 60_000, intervalMs: 100, what: `the other worker to take the ${job} over` },
  );
  const takenOver = (performance.now() - killedAt) / 1000;
  figures['kill→taken over'] = `${takenOver.toFixed(0)} s`;
  log(`taken over by ${takeover.worker} (attempt ${takeover.attempt}) ${takenOver.toFixed(1)} s after the kill`);
  check(
    takenOver <= TAKEOVER_WITHIN_S,
    `the other worker took the ${job} over ${takenOver.toFixed(0)} s after the kill, more than ${TAKEOVER_WITHIN_S} s`,
  );
}
