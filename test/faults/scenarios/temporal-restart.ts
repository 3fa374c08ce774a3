// 4. The Temporal dev server stops (SIGTERM) while a batch is written and an
// export runs, and starts again on the same SQLite file and port: both
// finish. While it is down, status answers come from the database, and a
// new batch is refused with 503 (and may be sent again later).
import { watchBatchStatus } from '../lib/client.ts';
import { generatedBatch, seededBatch } from '../lib/data.ts';
import { verifyExport } from '../lib/exports.ts';
import { batchWriting, check, EndedTooSoon, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil, sleep } from '../../support/poll.ts';

const EXPORTED = 5_000;
const ENTITIES = 20_000;
const DOWN_MS = 10_000;

export const temporalRestart = scalingScenario(
  {
    name: 'temporal-restart',
    title: `Temporal dev server stopped (at least ${DOWN_MS / 1000} s) during a ${ENTITIES.toLocaleString('en')}-entity batch and a snapshot export`,
    timeoutMs: 10 * 60_000,
  },
  runAtScale,
);

/** The scenario with jobs `scale` times their base size. */
async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  const seedSize = EXPORTED * scale;
  const seed = await seededBatch({ client, db, ...context }, `tr_seed${scale}`, seedSize, 3 * 60_000);
  const seedIds = (await db.query<{ id: string }>('select id from entity where entity_type = $1 order by id', [seed.entityType])).map((row) => Number(row.id));

  const batch = await generatedBatch(context, `tr${scale}`, entities);
  const refused = await generatedBatch(context, `tr_refused${scale}`, 100);
  let polled: { polls: number; bad: string[]; seen: string[] };
  const statusWatch = watchBatchStatus(client, batch.batchId, 200);
  let exportId: string;
  let stoppedAt: number;
  try {
    await client.submitBatchOk(batch.body);
    await batchWriting(db, batch.batchId, 'Temporal could be stopped', 4 * 60_000);
    exportId = await client.startExportOk('snapshots', seedIds);
    // Stop as soon as the export is being written, or after 5 s whatever its state.
    const exportState = await pollUntil(
      async () => {
        const row = await db.exportRow(exportId);
        return row?.status === 'RUNNING' || row?.status === 'COMPLETED' ? row : undefined;
      },
      { timeoutMs: 5000, intervalMs: 10, what: 'the export to start' },
    ).catch(() => ({ status: 'ACCEPTED', entitiesWritten: 0 }));
    const batchState = await db.batch(batch.batchId);
    if (batchState?.status === 'COMPLETED' || batchState?.status === 'FAILED') throw new EndedTooSoon(`the batch finished (${batchState.status}) before Temporal could be stopped`);
    if (exportState.status === 'COMPLETED') throw new EndedTooSoon('the export finished before Temporal could be stopped');
    await stack.stopTemporal();
    stoppedAt = performance.now();
    log(
      `Temporal stopped; batch ${batchState?.status} ${batchState?.changesApplied}/${batchState?.changesTotal}, export ${exportState.status} (${exportState.entitiesWritten} written)`,
    );

    // While it is down: statuses answer (watched), a new batch gets 503 and is recorded FAILED
    // (the API's client retries the start for about 20 s first, which stretches the outage).
    const answer = await client.submitBatch(refused.body);
    log(`a batch sent while Temporal is down: ${answer.status} ${answer.body.slice(0, 120)}`);
    check(answer.status === 503, `a batch sent while Temporal is down answered ${answer.status || answer.error}, expected 503`);
    const exportDown = await client.request(`/api/v2/export/status/${exportId}`);
    check(exportDown.status === 200, `export status while Temporal is down answered ${exportDown.status || exportDown.error}`);
    await sleep(Math.max(0, DOWN_MS - (performance.now() - stoppedAt)));

    await stack.startTemporal();
    figures.outage = `${((performance.now() - stoppedAt) / 1000).toFixed(0)} s`;
    log(`Temporal started again after ${figures.outage}`);
    const resent = await client.submitBatch(refused.body);
    check(resent.status === 200, `the refused batch, sent again, answered ${resent.status || resent.error}: ${resent.body.slice(0, 200)}`);

    const final = await batchEnded(db.pool, batch.batchId, 5 * 60_000);
    check(final.status === 'COMPLETED', `the batch ended ${final.status}`);
    figures['stop→batch COMPLETED'] = `${((performance.now() - stoppedAt) / 1000).toFixed(0)} s`;
  } finally {
    polled = await statusWatch.stop();
  }
  log(`status polled ${polled.polls}× (${polled.seen.join(' → ')})`);
  check(polled.bad.length === 0, `GET status did not answer well ${polled.bad.length}×: ${polled.bad.slice(0, 5).join(' | ')}`);

  const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, entities);
  check(violations.length === 0, `not applied exactly once: ${violations.join('; ')}`);
  const exported = await client.waitExport(exportId, 3 * 60_000);
  await verifyExport({ client, stack }, exported, { kind: 'snapshot', entityIds: seedIds });

  // The workflows got over it too, not only the rows: the batch workflow closed, and the export
  // workflow has the activity's result (an outcome lost in the outage shows up after a heartbeat timeout).
  await pollUntil(async () => ((await workflows.status(batch.batchId)) === 'COMPLETED' ? true : undefined), {
    timeoutMs: 3 * 60_000,
    intervalMs: 1000,
    what: `the workflow of batch ${batch.batchId} to complete`,
  });
  await pollUntil(async () => ((await workflows.activitiesCompleted(exportId)) >= 1 ? true : undefined), {
    timeoutMs: 3 * 60_000,
    intervalMs: 1000,
    what: `the export workflow ${exportId} to record its activity as completed`,
  });
  figures['stop→export workflow has the result'] = `${((performance.now() - stoppedAt) / 1000).toFixed(0)} s`;
  log(`batch activity: ${describeAttempts(await workflows.activityAttempts(batch.batchId))}; export activity: ${describeAttempts(await workflows.activityAttempts(exportId))}`);
  const again = await batchEnded(db.pool, refused.batchId, 2 * 60_000);
  check(again.status === 'COMPLETED', `the batch refused during the outage and sent again ended ${again.status}`);
  check((await db.exactlyOnceViolations(refused.batchId, refused.entityType, 100)).length === 0, 'the resent batch was not applied exactly once');
}
