// 3. PostgreSQL cuts every connection of the service's database while a
// batch is written (pg_terminate_backend; the server itself stays up, it is
// shared): the activity fails, is retried, the batch completes once, and no
// reader ever sees part of it.
import { watchBatchStatus } from '../lib/client.ts';
import { generatedBatch } from '../lib/data.ts';
import { batchWriting, check, EndedTooSoon, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { watchAllOrNothing } from '../lib/visibility.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil, sleep } from '../../support/poll.ts';

const ENTITIES = 10_000;

export const databaseCut = scalingScenario(
  {
    name: 'database-cut',
    title: `PostgreSQL connections terminated twice during a ${ENTITIES.toLocaleString('en')}-entity batch`,
    timeoutMs: 8 * 60_000,
  },
  runAtScale,
);

/** The scenario with jobs `scale` times their base size. */
async function runAtScale({ client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  const batch = await generatedBatch(context, `cut${scale}`, entities);
  let visible: { reads: number; partial: number[]; errors: string[] };
  let polled: { polls: number; bad: string[]; seen: string[] };
  const visibility = watchAllOrNothing(db, batch.entityType, entities, 50);
  const statusWatch = watchBatchStatus(client, batch.batchId, 200);
  try {
    await client.submitBatchOk(batch.body);
    // First cut: in the middle of the writes (the transaction is open, some steps are written).
    const caught = await batchWriting(db, batch.batchId, 'the cut', 4 * 60_000);
    const firstCut = await db.terminateOthers();
    log(`cut ${firstCut} connection(s) at changesApplied ${caught.changesApplied}/${caught.changesTotal}`);
    check((await db.countOfType(batch.entityType)) === 0, 'entities of the batch are visible after its transaction was cut');

    // Second cut: early in the retry (reading the body or planning), before it could finish.
    await pollUntil(async () => ((await workflows.pendingAttempt(batch.batchId)) ?? 0) >= 2 || undefined, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'the apply activity to be retried after the cut',
    });
    await sleep(1500);
    const row = await db.batch(batch.batchId);
    if (row?.status !== 'PROCESSING') throw new EndedTooSoon(`attempt 2 finished within 1.5 s (${row?.status}), before the second cut`);
    const secondCut = await db.terminateOthers();
    log(`cut ${secondCut} connection(s) again, 1.5 s into attempt 2`);

    const final = await batchEnded(db.pool, batch.batchId, 5 * 60_000);
    check(final.status === 'COMPLETED', `the batch ended ${final.status}`);
  } finally {
    visible = await visibility.stop();
    polled = await statusWatch.stop();
  }
  log(
    `status polled ${polled.polls}× (${polled.seen.join(' → ')}), not answered well ${polled.bad.length}×; entity count read ${visible.reads}×`,
  );
  figures['status 5xx/no answer'] = `${polled.bad.length} of ${polled.polls}`;
  check(visible.partial.length === 0, `a partial batch was visible: counts ${visible.partial.slice(0, 10).join(', ')}`);
  check(visible.errors.length === 0, `counting failed: ${visible.errors.slice(0, 3).join(' | ')}`);

  const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, entities);
  check(violations.length === 0, `not applied exactly once: ${violations.join('; ')}`);
  const attempts = await workflows.finishedActivityAttempts(batch.batchId);
  log(`activities in the workflow history: ${describeAttempts(attempts)}`);
  check(
    attempts.some((a) => a.attempt >= 2),
    `the apply activity was not retried (${describeAttempts(attempts)})`,
  );

  // The API's pool got over the cut: reads and the result answer.
  const result = await client.batchResult(batch.batchId);
  check(result.includes('batchChangeSuccess'), `the result is not a success document: ${result.slice(0, 300)}`);
  const [some] = await db.query<{ id: string }>('select id from entity where entity_type = $1 order by id limit 1', [batch.entityType]);
  const read = await client.request(`/api/v2/entities/${some!.id}`);
  check(read.status === 200, `GET entity after the cuts answered ${read.status || read.error}`);
  check(polled.bad.length <= 2, `GET status failed ${polled.bad.length}× around the cuts: ${polled.bad.slice(0, 5).join(' | ')}`);
  if (polled.bad.length > 0) log(`status answers lost to the cut: ${polled.bad.join(' | ')}`);
}
