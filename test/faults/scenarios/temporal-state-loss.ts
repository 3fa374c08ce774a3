// Temporal loses its state: the dev server stops while a 10,000-entity batch
// is written and another waits for the one bulk slot, its SQLite file is
// deleted, and it starts empty on the same port. Nothing is restarted by
// hand: the apply learns its workflow is gone and rolls back recording
// nothing; the recovery sweep re-creates the search attributes and the
// expiry schedule and starts both batches' workflows again; both complete
// exactly once, and a batch submitted after the return is accepted (within
// 2 minutes) and completes.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { generatedBatch } from '../lib/data.ts';
import { batchWriting, check, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil } from '../../support/poll.ts';
import { expiryScheduleId } from '../../../temporal/names.ts';

const ENTITIES = 10_000;
const QUEUED = 1_000;
const NEW = 100;

export const temporalStateLoss = scalingScenario(
  {
    name: 'temporal-state-loss',
    title: `Temporal's database deleted during a ${ENTITIES.toLocaleString('en')}-entity apply with another batch queued; it starts empty`,
    timeoutMs: 12 * 60_000,
    // One bulk slot, so that the second batch waits in Temporal's queue when the state is lost.
    env: { WORKER_MAX_CONCURRENT_ACTIVITIES: '1' },
  },
  runAtScale,
);

async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  const batch = await generatedBatch(context, `sl${scale}`, entities);
  const queued = await generatedBatch(context, `slq${scale}`, QUEUED);
  const later = await generatedBatch(context, `sln${scale}`, NEW);
  await client.submitBatchOk(batch.body);
  await client.submitBatchOk(queued.body);
  const caught = await batchWriting(db, batch.batchId, 'Temporal could lose its state', 4 * 60_000);
  check((await db.batch(queued.batchId))?.status === 'ACCEPTED', 'the second batch is not waiting for the bulk slot');

  await stack.stopTemporal();
  rmSync(join(stack.scratch, 'temporal.db'), { force: true });
  await stack.startTemporal();
  const returnedAt = performance.now();
  log(`Temporal started empty (its database deleted) at changesApplied ${caught.changesApplied}/${caught.changesTotal}`);

  const accepted = await pollUntil(
    async () => {
      const answer = await client.submitBatch(later.body);
      return answer.status === 200 ? answer : undefined;
    },
    { timeoutMs: 2 * 60_000, intervalMs: 2000, what: 'a new batch to be accepted after Temporal came back empty' },
  );
  figures['return→new batch accepted'] = `${((performance.now() - returnedAt) / 1000).toFixed(0)} s`;
  log(`a new batch accepted ${figures['return→new batch accepted']} after the return (${accepted.status})`);

  await pollUntil(async () => ((await workflows.scheduleExists(expiryScheduleId('bench'))) ? true : undefined), {
    timeoutMs: 3 * 60_000,
    intervalMs: 2000,
    what: 'the expiry schedule to be created again',
  });
  figures['return→schedule back'] = `${((performance.now() - returnedAt) / 1000).toFixed(0)} s`;

  for (const [job, count] of [
    [batch, entities],
    [queued, QUEUED],
    [later, NEW],
  ] as const) {
    const ended = await batchEnded(db.pool, job.batchId, 6 * 60_000);
    check(ended.status === 'COMPLETED', `batch ${job.batchId} (${job.count} entities) ended ${ended.status}: ${ended.error}`);
    const violations = await db.exactlyOnceViolations(job.batchId, job.entityType, count);
    check(violations.length === 0, `batch of ${count} not applied exactly once: ${violations.join('; ')}`);
  }
  figures['return→all COMPLETED'] = `${((performance.now() - returnedAt) / 1000).toFixed(0)} s`;
  check(stack.unexpectedExits.length === 0, `a process exited: ${stack.unexpectedExits.join('; ')}`);
}
