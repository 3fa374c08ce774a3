// The service's entry points (api/main.ts, worker/main.ts) run as real
// processes against the run's Temporal dev server and database, loaded by
// Node's own ESM loader as `npm run api` and `npm run worker` load them.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { Db } from '../../db/index.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { TEST_TOKENS, type Harness } from './harness.ts';
import { eventually } from './poll.ts';

export type EntryPoint = 'api/main.ts' | 'worker/main.ts';

export class EntryProcesses {
  readonly children: ChildProcess[] = [];
  /** Everything the processes wrote, each line prefixed by its entry point. */
  readonly output: string[] = [];

  start(entry: EntryPoint, env: NodeJS.ProcessEnv): ChildProcess {
    const child = spawn(process.execPath, [fileURLToPath(new URL(`../../${entry}`, import.meta.url))], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [child.stdout, child.stderr])
      stream.on('data', (chunk: Buffer) => this.output.push(`${entry}: ${chunk.toString()}`));
    this.children.push(child);
    return child;
  }

  killAll(): void {
    for (const child of this.children) if (child.exitCode === null) child.kill('SIGKILL');
  }

  /**
   * Waits for the API of `env` to answer /health (failing if one of
   * `watched` exits first), and gives what the batch helpers need of a
   * harness: its API as the admin, and the run's database (the waits for a
   * batch read it, as every test's do).
   */
  async healthyApi(env: NodeJS.ProcessEnv, watched: readonly ChildProcess[], db: Db): Promise<Harness> {
    const baseUrl = `http://127.0.0.1:${env.PORT}`;
    await eventually(async () => {
      const health = await fetch(`${baseUrl}/health`).catch(() => undefined);
      if (watched.some((child) => child.exitCode !== null)) throw new Error(`an entry point exited:\n${this.output.join('')}`);
      return health?.status === 200 ? true : undefined;
    }, 60_000);
    return {
      api: (path: string, init: RequestInit = {}) =>
        fetch(`${baseUrl}${path}`, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${TEST_TOKENS.admin}` },
        }),
      db,
    } as Harness;
  }
}

/** The environment of an API and its workers: the run's services, a task queue of its own (it must not take other tests' workflows), an admin token. */
export async function entryEnv(): Promise<NodeJS.ProcessEnv> {
  const taskQueue = `entry-points-${randomUUID()}`;
  return {
    ...process.env,
    DATABASE_URL: inject('databaseUrl'),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    // A worker deployment of its own: a version made current by another test's worker (another bundle) never routes its workflows.
    WORKER_DEPLOYMENT_NAME: taskQueue,
    DATA_DIR: inject('scratchDir'),
    WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    LOG_LEVEL: 'warn',
    PORT: String(await freePort()),
    AUTH_TOKENS: JSON.stringify([{ token: TEST_TOKENS.admin, name: 'entry-admin', permissions: ['admin'] }]),
  };
}
