// 1. Two workers; the one applying a 20k-entity batch dies (SIGKILL): the
// other takes the batch over within seconds and applies it exactly once,
// and its status answers all along. A client follows the change feed every
// 200 ms throughout, and a small batch commits while the big one is retried:
// in the end the follower has seen every record of both at its current
// revision (the feed is in commit order whatever overlaps).
import { FeedFollower } from '../../support/feed-follower.ts';
import { watchBatchStatus } from '../lib/client.ts';
import { generatedBatch } from '../lib/data.ts';
import { batchWriting, check, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { watchAllOrNothing } from '../lib/visibility.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { every, pollUntil } from '../../support/poll.ts';
import { loadAverage } from '../lib/load.ts';
import { checkTakeover, killHolder, pidOfIdentity, startExtraWorker } from '../lib/processes.ts';

// Small enough that the retry, which applies the whole batch again, ends
// within the failover bound on a busy CI machine too.
const ENTITIES = 10_000;
/** What a failover aims at: the other worker completes the job within this of the kill (on a machine not busy with other work). */
export const FAILOVER_WITHIN_S = 45;

export const workerKill = scalingScenario(
  {
    name: 'worker-kill',
    title: `two workers; the one applying a ${ENTITIES.toLocaleString('en')}-entity batch is SIGKILLed, the other takes it over`,
    timeoutMs: 8 * 60_000,
  },
  runAtScale,
);

/** The scenario with jobs `scale` times their base size. */
async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  const batch = await generatedBatch(context, `wk${scale}`, entities);
  const second = startExtraWorker(stack);
  let visible = { reads: 0, partial: [] as number[], errors: [] as string[] };
  let polled = { polls: 0, bad: [] as string[], seen: [] as string[] };
  log(
    `generated ${batch.count} creates (${(batch.body.length / 2 ** 20).toFixed(1)} MB) of type ${batch.entityType}; two workers (pids ${stack.worker.pid}, ${second.process.pid})`,
  );
  const visibility = watchAllOrNothing(db, batch.entityType, entities);
  const statusWatch = watchBatchStatus(client, batch.batchId, 200);
  const follower = new FeedFollower(async (path) => {
    const answer = await client.request(`/api/v2${path}`);
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status || answer.error}: ${answer.body.slice(0, 300)}`);
    return answer.body;
  });
  const syncErrors: string[] = [];
  await follower.sync();
  const following = every(200, () => follower.sync().catch((error: Error) => void syncErrors.push(error.message)));
  const small = await generatedBatch(context, `wks${scale}`, 3);
  try {
    await client.submitBatchOk(batch.body);
    const caught = await batchWriting(db, batch.batchId, 'the worker could be killed', 5 * 60_000);
    const holder = await pollUntil(async () => await workflows.holder(batch.batchId), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the worker holding the batch',
    });
    const killed = await killHolder(stack, second, pidOfIdentity(holder)!);
    const killedAt = performance.now();
    log(`the ${killed} worker (${holder}) killed at changesApplied ${caught.changesApplied}/${caught.changesTotal}`);
    check((await db.countOfType(batch.entityType)) === 0, 'entities of the batch are visible after the worker died mid-transaction');

    await checkTakeover(
      { workflows, figures, log },
      'batch',
      batch.batchId,
      async () => (await db.batch(batch.batchId))?.status === 'COMPLETED',
      killedAt,
    );
    // Begun after the big batch's retry, committed before it: a later seq, an earlier commit.
    await client.submitBatchOk(small.body);
    const final = await batchEnded(db.pool, batch.batchId, 3 * 60_000);
    const recovery = (performance.now() - killedAt) / 1000;
    log(`batch ${final.status} ${recovery.toFixed(1)} s after the kill`);
    check(final.status === 'COMPLETED', `the batch ended ${final.status}: ${final.error}`);
    figures['kill→COMPLETED'] = `${recovery.toFixed(0)} s`;
    // How long the retry itself takes depends on the machine (it reads, plans and writes the whole batch again): a figure, not a check.
    if (recovery > FAILOVER_WITHIN_S)
      log(`completed ${recovery.toFixed(0)} s after the kill: over the ${FAILOVER_WITHIN_S} s aimed at (load ${loadAverage()})`);
    const smallEnded = await batchEnded(db.pool, small.batchId, 60_000);
    check(smallEnded.status === 'COMPLETED', `the small batch ended ${smallEnded.status}: ${smallEnded.error}`);
  } finally {
    await following.stop();
    await visibility.stop().then((seen) => (visible = seen));
    await statusWatch.stop().then((seen) => (polled = seen));
    await second.stop();
  }
  check(second.crashed() === undefined, second.crashed() ?? '');
  log(`status polled ${polled.polls}× (${polled.seen.join(' → ')}); entity count read ${visible.reads}×`);
  figures['status polls'] = `${polled.polls}, bad ${polled.bad.length}`;
  check(polled.bad.length === 0, `GET status did not answer well ${polled.bad.length}×: ${polled.bad.slice(0, 5).join(' | ')}`);
  check(visible.partial.length === 0, `a partial batch was visible: counts ${visible.partial.slice(0, 10).join(', ')}`);

  await follower.sync();
  check(syncErrors.length === 0, `the feed follower failed ${syncErrors.length}×: ${syncErrors.slice(0, 3).join(' | ')}`);
  const current = await db.query<{ id: string; metadata_rev: string }>(
    'select id, metadata_rev from entity where entity_type = any($1::text[])',
    [[batch.entityType, small.entityType]],
  );
  const unseen = current.filter((row) => follower.seen.get(Number(row.id)) !== row.metadata_rev);
  figures['feed syncs'] = `${follower.syncs}, unseen ${unseen.length}`;
  log(
    `feed followed in ${follower.syncs} syncs; ${current.length - unseen.length}/${current.length} records seen at their current revision`,
  );
  check(
    current.length === entities + small.count,
    `expected ${entities + small.count} records of the two batches, found ${current.length}`,
  );
  check(
    unseen.length === 0,
    `the feed follower never saw ${unseen.length} records at their current revision (e.g. ${unseen
      .slice(0, 5)
      .map((row) => row.id)
      .join(', ')})`,
  );

  const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, entities);
  check(violations.length === 0, `not applied exactly once: ${violations.join('; ')}`);
  const attempts = await workflows.finishedActivityAttempts(batch.batchId);
  log(`activities in the workflow history: ${describeAttempts(attempts)}`);
  check(
    attempts.some((a) => a.attempt >= 2),
    `the apply activity was not retried (${describeAttempts(attempts)}): the kill missed it`,
  );
  const result = await client.batchResult(batch.batchId);
  check(result.includes('batchChangeSuccess'), `the result is not a success document: ${result.slice(0, 300)}`);
}
