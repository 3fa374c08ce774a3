// A deploy stops the bulk worker (SIGTERM) while it applies a 20,000-entity
// batch, and starts its successor at once. The stopping worker polls nothing
// more but lets the apply finish within WORKER_SHUTDOWN_GRACE_SECONDS: the
// batch commits on attempt 1 in one transaction, before the old worker
// exits, and the new worker closes the workflow. (20,000 entities take long
// enough on the CI machine to be caught mid-write; the grace period itself is
// sized for 100,000-entity and larger applies, docs/reliability.md.)
import { generatedBatch } from '../lib/data.ts';
import { batchWriting, check, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil } from '../../support/poll.ts';

const ENTITIES = 20_000;
const GRACE_SECONDS = 180;

export const workerShutdown = scalingScenario(
  {
    name: 'worker-shutdown',
    title: `the bulk worker is stopped (SIGTERM) during a ${ENTITIES.toLocaleString('en')}-entity apply; the apply finishes on attempt 1 before it exits`,
    timeoutMs: 8 * 60_000,
    env: { WORKER_SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS) },
  },
  runAtScale,
);

async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  const batch = await generatedBatch(context, `ws${scale}`, entities);
  await client.submitBatchOk(batch.body);
  const caught = await batchWriting(db, batch.batchId, 'the worker could be stopped', 4 * 60_000);
  const holder = await pollUntil(async () => await workflows.startedActivity(batch.batchId), { timeoutMs: 10_000, intervalMs: 50, what: 'the worker holding the batch' });
  check(holder.worker.startsWith(`${stack.worker.pid}@`), `the batch is held by ${holder.worker}, not the bulk worker (pid ${stack.worker.pid})`);

  const stoppedAt = performance.now();
  // A SIGKILL only if the worker outlives its grace period by far: then the scenario fails below.
  const exited = stack.killWorker('SIGTERM', (GRACE_SECONDS + 60) * 1000).then(() => performance.now());
  log(`SIGTERM to the bulk worker (pid ${holder.worker}) at changesApplied ${caught.changesApplied}/${caught.changesTotal}; its successor starts`);
  stack.startWorker();
  const exitedAt = await exited;
  const atExit = await db.batch(batch.batchId);
  figures['SIGTERM→old worker exited'] = `${((exitedAt - stoppedAt) / 1000).toFixed(0)} s`;
  log(`the old worker exited after ${figures['SIGTERM→old worker exited']}; the batch was then ${atExit?.status}`);
  check(atExit?.status === 'COMPLETED', `the batch was ${atExit?.status} when the stopped worker exited: its apply did not finish within the grace period`);
  check((exitedAt - stoppedAt) / 1000 < GRACE_SECONDS, 'the stopped worker waited out its whole grace period');

  const final = await batchEnded(db.pool, batch.batchId, 60_000);
  check(final.status === 'COMPLETED', `the batch ended ${final.status}: ${final.error}`);
  const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, entities);
  check(violations.length === 0, `not applied exactly once: ${violations.join('; ')}`);
  await pollUntil(async () => ((await workflows.status(batch.batchId)) === 'COMPLETED' ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 500,
    what: `the new worker to close the workflow of batch ${batch.batchId}`,
  });
  const attempts = await workflows.activityAttempts(batch.batchId);
  log(`apply: ${describeAttempts(attempts)}`);
  check(attempts[0]?.attempt === 1, `the apply completed on attempt ${attempts[0]?.attempt}, not 1`);
}
