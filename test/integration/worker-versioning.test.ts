import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../logger.ts';
import { makeVersionCurrent, versionName } from '../../temporal/client/worker-deployment.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { createWorker } from '../../worker/create-worker.ts';

// Workers declare a worker deployment version (the bundle's build id); a
// batch is pinned to the version that started it; a worker makes its
// version current only as WORKER_VERSION_CURRENT says. The deploy itself,
// old and new release side by side, is the `deploy` fault scenario.

describe('worker versioning', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ versioned: true });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const deploymentName = () => harness.config.TEMPORAL_TASK_QUEUE;
  const current = async () =>
    (await harness.temporal.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: deploymentName() }))
      .workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId;

  it("pins a batch to the version that started it, the bundle's build id, made current at the worker's first start", async () => {
    const buildId = await current();
    expect(buildId).toMatch(/^[0-9a-f]{16}$/);
    const { batchId } = await applyBatch(harness, batchXml([create('v1', 'Verze', { entityType: `T-${randomUUID()}` })]));
    const events = (await harness.temporal.workflow.getHandle(batchId).fetchHistory()).events ?? [];
    const completed = events.flatMap((event) => event.workflowTaskCompletedEventAttributes ?? []);
    expect(completed.length).toBeGreaterThan(0);
    for (const task of completed) {
      expect(task.deploymentVersion?.buildId).toBe(buildId);
      expect(String(task.versioningBehavior)).toMatch(/PINNED|^1$/);
    }
  });

  it('makes another version current only when asked to always, and leaves it alone when asked never', async () => {
    const ours = { deploymentName: deploymentName(), buildId: (await current())! };
    const other = { deploymentName: deploymentName(), buildId: `other-${randomUUID().slice(0, 8)}` };
    // A second release's worker, every lane, on the harness's task queues: its polls register the version.
    const connection = await NativeConnection.connect({ address: harness.config.temporalAddress });
    const worker = await createWorker({
      connection,
      client: harness.temporal,
      namespace: harness.config.TEMPORAL_NAMESPACE,
      taskQueue: harness.config.TEMPORAL_TASK_QUEUE,
      db: harness.db,
      log: createLogger('silent', 'test'),
      forceKeySecret: harness.config.forceKeySecret,
      exportDir: harness.config.exportDir,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      deployment: other,
    });
    const running = worker.run();
    try {
      expect(await makeVersionCurrent(harness.temporal, other, 'never')).toBe('left alone');
      expect(await makeVersionCurrent(harness.temporal, other, 'if-none')).toBe('another version is current');
      expect(await current()).toBe(ours.buildId);
      expect(await makeVersionCurrent(harness.temporal, other, 'always')).toBe('made current');
      expect(await current()).toBe(other.buildId);
      expect(await makeVersionCurrent(harness.temporal, other, 'always')).toBe('already current');
      expect(await makeVersionCurrent(harness.temporal, ours, 'always')).toBe('made current');
      expect(await current()).toBe(ours.buildId);
      expect(versionName(ours)).toBe(`${deploymentName()}:${ours.buildId}`);
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  });
});
