import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker, type ReplayResult } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/lib/ports.ts';
import type { BatchWorkflowInput } from '../../temporal/contracts.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import { recordedHistories, workflowTypeOf, type RecordedHistory } from '../histories/histories.ts';
import { EntryProcesses, entryEnv } from '../support/entry-points.ts';
import { eventually } from '../support/poll.ts';

// Every recorded workflow history (test/histories/, append-only) replayed
// against the workflow bundle the workers run now: a change to workflows/
// that would fail running workflows with a non-determinism error fails here.
// The negative control (one command more) proves the replay can fail, and
// that a worker running such a bundle shows it in its metrics.

const quiet = () => undefined;

/** The sum of a Prometheus series' samples, all labels together; 0 when it does not exist yet. */
function seriesTotal(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

let negativeControl: Promise<string> | undefined;
/** The negative control's bundle, built once. */
function negativeControlBundle(): Promise<string> {
  negativeControl ??= (async () => {
    const bundlePath = join(mkdtempSync(join(tmpdir(), 'replay-control-')), 'bundle.js');
    const { code } = await bundleWorkflowCode({
      workflowsPath: new URL('../histories/negative-control/workflows.ts', import.meta.url).pathname,
      logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
    });
    writeFileSync(bundlePath, code);
    return bundlePath;
  })();
  return negativeControl;
}

async function replay(bundlePath: string, histories: RecordedHistory[]): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: bundlePath }, replayName: 'replay-test' }, histories))
    results.push(result);
  return results;
}

describe('recorded workflow histories replay against the current bundle', () => {
  const histories = recordedHistories();
  beforeAll(() => {
    if (!Runtime._instance)
      Runtime.install({
        logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m: string) => console.error(m) },
        telemetryOptions: { logging: { forward: {} } },
      });
    // The negative control's failed workflow tasks are the core's warnings: expected, so not printed.
  });

  it('has histories of every job workflow, closed and cut mid-activity', () => {
    expect(new Set(histories.map(workflowTypeOf))).toEqual(new Set(['batchWorkflow', 'exportWorkflow', 'expiryWorkflow']));
    expect(histories.some((history) => history.file.includes('open-mid'))).toBe(true);
  });

  it('every one replays without a determinism error', async () => {
    const results = await replay(inject('workflowBundlePath'), histories);
    expect(results).toHaveLength(histories.length);
    expect(results.filter((result) => result.error).map((result) => `${result.workflowId}: ${result.error?.message}`)).toEqual([]);
  });

  it('negative control: a bundle with one command more fails every batch history with a determinism error', async () => {
    const bundlePath = await negativeControlBundle();
    const batchHistories = histories.filter((history) => workflowTypeOf(history) === 'batchWorkflow');
    const results = await replay(bundlePath, batchHistories);
    expect(results).toHaveLength(batchHistories.length);
    for (const result of results) expect(result.error, result.workflowId).toBeInstanceOf(DeterminismViolationError);
  });

  describe('negative control run by a worker process', () => {
    const processes = new EntryProcesses();
    afterAll(() => processes.killAll());

    it("fails the workflow task of a history the current bundle made, counted in the worker's Temporal runtime metrics", async () => {
      const taskQueue = `replay-control-${randomUUID()}`;
      const batchId = randomUUID();
      const connection = await Connection.connect({ address: inject('temporalAddress') });
      const nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
      try {
        const client = new Client({ connection });
        // The history: the current bundle's first workflow task, the apply scheduled on a lane nobody polls. No cache, so no sticky queue to wait out.
        const current = await Worker.create({
          connection: nativeConnection,
          taskQueue,
          workflowBundle: { codePath: inject('workflowBundlePath') },
          maxCachedWorkflows: 0,
        });
        const handle = await current.runUntil(async () => {
          const input: BatchWorkflowInput = { batchId, lane: 'interactive' };
          const started = await client.workflow.start(WORKFLOW_TYPES.batch, { taskQueue, workflowId: batchId, args: [input] });
          await eventually(async () =>
            (await started.fetchHistory()).events?.some((event) => event.activityTaskScheduledEventAttributes) ? true : undefined,
          );
          return started;
        });

        // The worker as deployed (worker/main.ts), on the negative control's bundle, with its metrics served.
        const env = {
          ...(await entryEnv()),
          TEMPORAL_TASK_QUEUE: taskQueue,
          WORKFLOW_BUNDLE: await negativeControlBundle(),
          WORKER_LANES: 'bulk',
          WORKER_METRICS_PORT: String(await freePort()),
          LOG_LEVEL: 'silent',
        };
        const worker = processes.start('worker/main.ts', env);
        const metrics = async () => {
          if (worker.exitCode !== null) throw new Error(`the worker exited:\n${processes.output.join('')}`);
          const answer = await fetch(`http://127.0.0.1:${env.WORKER_METRICS_PORT}/metrics`).catch(() => undefined);
          return answer?.ok ? await answer.text() : undefined;
        };
        // Polling: the core's series are there, no workflow task has failed yet.
        const before = await eventually(
          async () => ((await metrics())?.includes('temporal_num_pollers') ? (await metrics())! : undefined),
          60_000,
        );
        expect(seriesTotal(before, 'temporal_workflow_task_execution_failed')).toBe(0);

        // A cancel asks for a workflow task: the worker replays the history, meets the apply where its bundle starts a timer, and fails the task.
        await handle.cancel();
        const after = await eventually(async () => {
          const text = await metrics();
          return text !== undefined && seriesTotal(text, 'temporal_workflow_task_execution_failed') > 0 ? text : undefined;
        }, 60_000);
        expect(after).toMatch(
          /^temporal_workflow_task_execution_failed\{failure_reason="NonDeterminismError",[^}]*workflow_type="batchWorkflow"/m,
        );

        await handle.terminate('negative control done');
        const exit = once(worker, 'exit');
        worker.kill('SIGTERM');
        expect((await exit)[0], processes.output.join('')).toBe(0);
      } finally {
        await nativeConnection.close();
        await connection.close();
      }
    });
  });
});
