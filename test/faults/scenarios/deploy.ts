// A deploy of a changed workflow while a batch of the previous release is
// mid-apply: the old bulk worker is stopped (SIGTERM) and a worker of the
// new release (test/faults/deploy/, a step added behind patched()) is
// started at once. The stopping worker polls nothing more but lets the apply
// finish within WORKER_SHUTDOWN_GRACE_SECONDS: the batch commits on attempt
// 1, in one transaction, before the old worker exits. The old batch
// completes on its version (no patch marker), a new batch runs on the new one
// (the marker and its timer), and no workflow task fails in either.
// (20,000 entities take long enough here to be caught mid-write; the grace
// period itself is sized for 100,000-entity and larger applies.)
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import { generatedBatch } from '../lib/data.ts';
import { batchWriting, check, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil } from '../../support/poll.ts';

const ENTITIES = 20_000;
const NEW = 100;
const GRACE_SECONDS = 180;

export const deploy = scalingScenario(
  {
    name: 'deploy',
    title: `a changed workflow deployed (patched) while a ${ENTITIES.toLocaleString('en')}-entity batch of the previous release is mid-apply`,
    timeoutMs: 10 * 60_000,
    env: { WORKER_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS) },
  },
  runAtScale,
);

/** What the history of a workflow says about a deploy: its patch markers, timers and failed workflow tasks. */
async function historyFacts(address: string, workflowId: string): Promise<{ markers: number; timers: number; taskFailures: string[] }> {
  const connection = await Connection.connect({ address });
  try {
    const events = (await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    return {
      markers: events.filter((event) => event.markerRecordedEventAttributes).length,
      timers: events.filter((event) => event.timerStartedEventAttributes).length,
      taskFailures: events.flatMap((event) =>
        event.workflowTaskFailedEventAttributes ? [event.workflowTaskFailedEventAttributes.failure?.message ?? 'failed'] : [],
      ),
    };
  } finally {
    await connection.close();
  }
}

async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  const release = join(stack.scratch, 'next-release-bundle.js');
  const { code } = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../deploy/workflows.ts', import.meta.url)),
    logger: {
      log: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: console.error,
    },
  });
  writeFileSync(release, code);

  const old = await generatedBatch(context, `dp${scale}`, entities);
  await client.submitBatchOk(old.body);
  const caught = await batchWriting(db, old.batchId, 'the new release could be deployed', 4 * 60_000);
  const holder = await pollUntil(async () => await workflows.startedActivity(old.batchId), {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: 'the worker holding the batch',
  });
  check(
    holder.worker.startsWith(`${stack.worker.pid}@`),
    `the batch is held by ${holder.worker}, not the bulk worker (pid ${stack.worker.pid})`,
  );
  const stoppedAt = performance.now();
  // A SIGKILL only if the worker outlives its grace period by far: then the scenario fails below.
  const stopped = stack
    .killWorker('SIGTERM', (GRACE_SECONDS + 60) * 1000)
    .then(async () => ({ at: performance.now(), batch: await db.batch(old.batchId) }));
  stack.startWorker({ WORKFLOW_BUNDLE: release });
  log(
    `deployed the next release at changesApplied ${caught.changesApplied}/${caught.changesTotal}: old worker stopping, new worker started`,
  );
  const fresh = await generatedBatch(context, `dpn${scale}`, NEW);
  // Sent once the old worker is gone: a workflow task that reached the old worker's last poll
  // as it stopped would run the new batch on the old release (seen at load 20), which a deploy
  // allows but this check could not tell apart.
  const exited = await stopped;
  await client.submitBatchOk(fresh.body);
  figures['SIGTERM→old worker exited'] = `${((exited.at - stoppedAt) / 1000).toFixed(0)} s`;
  check(
    exited.batch?.status === 'COMPLETED',
    `the batch was ${exited.batch?.status} when the stopped worker exited: its apply did not finish within the grace period`,
  );
  check((exited.at - stoppedAt) / 1000 < GRACE_SECONDS, 'the stopped worker waited out its whole grace period');

  for (const [batch, count] of [
    [old, entities],
    [fresh, NEW],
  ] as const) {
    const ended = await batchEnded(db.pool, batch.batchId, 4 * 60_000);
    check(ended.status === 'COMPLETED', `batch ${batch.batchId} ended ${ended.status}: ${ended.error}`);
    const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, count);
    check(violations.length === 0, `not applied exactly once: ${violations.join('; ')}`);
  }
  const [oldFacts, newFacts] = [
    await historyFacts(stack.temporalAddress, old.batchId),
    await historyFacts(stack.temporalAddress, fresh.batchId),
  ];
  log(
    `old batch: ${oldFacts.markers} markers, ${oldFacts.timers} timers; new batch: ${newFacts.markers} markers, ${newFacts.timers} timers`,
  );
  check(
    oldFacts.taskFailures.length === 0 && newFacts.taskFailures.length === 0,
    `workflow tasks failed: ${[...oldFacts.taskFailures, ...newFacts.taskFailures].join('; ')}`,
  );
  check(oldFacts.markers === 0 && oldFacts.timers === 0, "the old batch took the new release's step");
  check(newFacts.markers === 1 && newFacts.timers === 1, 'the new batch did not run on the new release');
  const attempts = await workflows.finishedActivityAttempts(old.batchId);
  check(attempts[0]?.attempt === 1, `the old batch's apply completed on attempt ${attempts[0]?.attempt}, not 1`);
  figures.deployed = 'old batch on its version (attempt 1), new batch on the new one';
}
