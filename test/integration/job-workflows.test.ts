import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BatchActivities, ExportActivities } from '../../temporal/contracts.ts';
import { ensureTemporalBinary } from '../../scripts/lib/temporal-binary.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import { laneTaskQueue } from '../../temporal/names.ts';
import { batchPhaseQuery } from '../../workflows/batch.ts';
import { eventually } from '../support/poll.ts';

// The workflows alone, with their activities played by the test, on
// @temporalio/testing's local environment started from the pinned `temporal`
// binary (an existing path: nothing is downloaded): what each workflow does
// at each step, what a failure and a cancel make of the job.

type Activities = BatchActivities & ExportActivities;

describe('job workflows with mocked activities (TestWorkflowEnvironment.createLocal)', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    if (!Runtime._instance)
      Runtime.install({
        logger: {
          log: () => undefined,
          trace: () => undefined,
          debug: () => undefined,
          info: () => undefined,
          warn: () => undefined,
          error: (m: string) => console.error(m),
        },
      });
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: ensureTemporalBinary() },
        searchAttributes: Object.values(SEARCH_ATTRIBUTES).map((key) => defineSearchAttributeKey(key.name, SearchAttributeType.KEYWORD)),
        extraArgs: ['--dynamic-config-value', 'frontend.enableServerVersionCheck=false'],
        // Its own warnings about a fresh in-memory cluster (a generated cluster id) are no news here.
        log: { format: 'pretty', level: 'error' },
      },
    });
  });
  afterAll(async () => {
    await env?.teardown();
  });

  /** Every call an activity received, by name. */
  type Calls = Array<[keyof Activities, ...unknown[]]>;

  /** Runs `body` with a worker whose activities are `mocks` (the others fail the test if called). */
  async function withWorker<T>(mocks: Partial<Activities>, body: (taskQueue: string, calls: Calls) => Promise<T>): Promise<T> {
    const taskQueue = `wf-${randomUUID()}`;
    const calls: Calls = [];
    const activities = Object.fromEntries(
      (['applyBatch', 'markBatchFailed', 'removeExpiredBatchBodies', 'runExport', 'markExportFailed', 'expireExports'] as const).map(
        (name) => [
          name,
          async (...args: unknown[]) => {
            calls.push([name, ...args]);
            const mock = mocks[name] as ((...a: unknown[]) => Promise<unknown>) | undefined;
            if (!mock) throw ApplicationFailure.nonRetryable(`the test did not expect ${name}`);
            return mock(...args);
          },
        ],
      ),
    );
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activities,
      maxHeartbeatThrottleInterval: 1000,
    });
    // Export activities run in the export lane, a task queue of their own beside the workflow's.
    const exportLane = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: laneTaskQueue(taskQueue, 'export'),
      activities,
      maxHeartbeatThrottleInterval: 1000,
    });
    return worker.runUntil(exportLane.runUntil(body(taskQueue, calls)));
  }

  const outcomeOf = async (workflowId: string) =>
    (await env.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes.get(
      defineSearchAttributeKey(SEARCH_ATTRIBUTES.outcome.name, SearchAttributeType.KEYWORD),
    );

  /** An activity that runs (heartbeating) until it is cancelled. */
  const untilCancelled = async () => {
    const context = Context.current();
    for (;;) {
      context.heartbeat();
      await context.sleep(100);
    }
  };

  it('batch: applies once and completes with the outcome; a verdict of failure still completes, Outcome=FAILED', async () => {
    await withWorker({ applyBatch: async () => 'FAILED' }, async (taskQueue, calls) => {
      const batchId = randomUUID();
      const result = await env.client.workflow.execute('batchWorkflow', { taskQueue, workflowId: batchId, args: [{ batchId }] });
      expect(result).toEqual({ batchId, status: 'FAILED' });
      expect(calls).toEqual([['applyBatch', batchId]]);
      expect(await outcomeOf(batchId)).toBe('FAILED');
      expect((await env.client.workflow.getHandle(batchId).describe()).status.name).toBe('COMPLETED');
    });
  });

  it('batch: answers its phase while the activity runs and after', async () => {
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    await withWorker(
      {
        applyBatch: async () => {
          started();
          await finished;
          return 'COMPLETED';
        },
      },
      async (taskQueue) => {
        const batchId = randomUUID();
        const handle = await env.client.workflow.start('batchWorkflow', { taskQueue, workflowId: batchId, args: [{ batchId }] });
        await running;
        expect(await handle.query(batchPhaseQuery)).toBe('PROCESSING');
        finish();
        expect(await handle.result()).toEqual({ batchId, status: 'COMPLETED' });
        expect(await handle.query(batchPhaseQuery)).toBe('COMPLETED');
        expect(await outcomeOf(batchId)).toBe('COMPLETED');
      },
    );
  });

  it('batch: an apply that fails for good marks the batch failed with the reason, and the workflow fails', async () => {
    await withWorker(
      {
        applyBatch: async () => {
          throw ApplicationFailure.nonRetryable('the body no longer reads', 'InvalidXml');
        },
        markBatchFailed: async () => undefined,
      },
      async (taskQueue, calls) => {
        const batchId = randomUUID();
        const error = await env.client.workflow
          .execute('batchWorkflow', { taskQueue, workflowId: batchId, args: [{ batchId }] })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WorkflowFailedError);
        expect(calls).toEqual([
          ['applyBatch', batchId],
          ['markBatchFailed', batchId, 'the body no longer reads'],
        ]);
        expect(await outcomeOf(batchId)).toBe('FAILED');
      },
    );
  });

  it.each([
    {
      job: 'batch',
      workflowType: 'batchWorkflow',
      run: 'applyBatch',
      markFailed: 'markBatchFailed',
      input: (id: string) => ({ batchId: id }),
    },
    {
      job: 'export',
      workflowType: 'exportWorkflow',
      run: 'runExport',
      markFailed: 'markExportFailed',
      input: (id: string) => ({ exportId: id, retentionMs: 1000 }),
    },
  ] as const)(
    '$job: a cancel waits for the activity to stop, marks the $job failed as cancelled, and the workflow ends CANCELLED',
    async ({ workflowType, run, markFailed, input }) => {
      await withWorker({ [run]: untilCancelled, [markFailed]: async () => undefined }, async (taskQueue, calls) => {
        const workflowId = randomUUID();
        const handle = await env.client.workflow.start(workflowType, { taskQueue, workflowId, args: [input(workflowId)] });
        await eventually(async () => ((await handle.describe()).raw.pendingActivities?.[0]?.lastHeartbeatTime ? true : undefined), 20_000);
        await handle.cancel();
        await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
        expect((await handle.describe()).status.name).toBe('CANCELLED');
        expect(calls.map(([name]) => name)).toEqual([run, markFailed]);
        expect(calls[1]![2]).toContain('cancelled by an operator');
        expect(await outcomeOf(workflowId)).toBe('CANCELLED');
        // The activity finished (cancelled) before the job was marked: the history has it cancelled, then the mark.
        const events = (await handle.fetchHistory()).events ?? [];
        const cancelledAt = events.findIndex((event) => event.activityTaskCanceledEventAttributes);
        const markScheduledAt = events.findLastIndex((event) => event.activityTaskScheduledEventAttributes);
        expect(cancelledAt).toBeGreaterThan(0);
        expect(markScheduledAt).toBeGreaterThan(cancelledAt);
      });
    },
  );

  it('export: closes as soon as the file is ready, with Outcome=COMPLETED', async () => {
    await withWorker(
      {
        runExport: async () => ({
          status: 'COMPLETED',
          entitiesWritten: 3,
          bytes: 10,
          sha256: 'x',
          expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        }),
      },
      async (taskQueue, calls) => {
        const exportId = randomUUID();
        const result = await env.client.workflow.execute('exportWorkflow', {
          taskQueue,
          workflowId: exportId,
          args: [{ exportId, retentionMs: 86_400_000 }],
        });
        expect(result).toEqual({ exportId, status: 'COMPLETED', entitiesWritten: 3 });
        expect(calls).toEqual([['runExport', exportId, 86_400_000]]);
        expect(await outcomeOf(exportId)).toBe('COMPLETED');
      },
    );
  });

  it('export: a write that fails for good marks the export failed with the reason', async () => {
    await withWorker(
      {
        runExport: async () => {
          throw ApplicationFailure.nonRetryable('disk full');
        },
        markExportFailed: async () => undefined,
      },
      async (taskQueue, calls) => {
        const exportId = randomUUID();
        await expect(
          env.client.workflow.execute('exportWorkflow', { taskQueue, workflowId: exportId, args: [{ exportId, retentionMs: 1000 }] }),
        ).rejects.toBeInstanceOf(WorkflowFailedError);
        expect(calls.at(-1)).toEqual(['markExportFailed', exportId, 'disk full']);
        expect(await outcomeOf(exportId)).toBe('FAILED');
      },
    );
  });

  it('expiry: expires exports, then removes the bodies of batches past their retention, and reports both', async () => {
    await withWorker({ expireExports: async () => 4, removeExpiredBatchBodies: async () => 7 }, async (taskQueue, calls) => {
      const result = await env.client.workflow.execute('expiryWorkflow', { taskQueue, workflowId: `expiry-${randomUUID()}`, args: [] });
      expect(result).toEqual({ exportsExpired: 4, batchBodiesRemoved: 7 });
      expect(calls).toEqual([['expireExports'], ['removeExpiredBatchBodies']]);
    });
  });
});
