// 4. A long Temporal outage: the dev server stops (SIGTERM) while a batch is
// written and an export runs, stays down for OUTAGE_MS, and starts again on
// the same SQLite file and port: both finish. While it is down, status
// answers come from the database; a v2 batch is answered 200 with its id and
// kept ACCEPTED (the recovery sweep starts it once Temporal is back), a v1
// batch is refused with 503 and nothing kept; an API restarted in the middle
// starts without Temporal and serves GET entity; the workers never exit.
import { randomUUID } from 'node:crypto';
import { watchBatchStatus } from '../lib/client.ts';
import { generatedBatch, seededBatch } from '../lib/data.ts';
import { verifyExport } from '../lib/exports.ts';
import { batchWriting, check, EndedTooSoon, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil, sleep } from '../../support/poll.ts';
import { batchXml, create } from '../../support/batches.ts';

const EXPORTED = 5_000;
const ENTITIES = 10_000;
/** Long enough for every client retry inside the service to have given up, and for an API to restart in the middle. */
const DOWN_MS = 2 * 60_000;
const KEPT = 100;

export const temporalRestart = scalingScenario(
  {
    name: 'temporal-restart',
    title: `Temporal down ${DOWN_MS / 60_000} minutes during a ${ENTITIES.toLocaleString('en')}-entity batch and a snapshot export; batches sent meanwhile, an API restarted`,
    timeoutMs: 14 * 60_000,
  },
  runAtScale,
);

/** The scenario with jobs `scale` times their base size. */
async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  const seedSize = EXPORTED * scale;
  const seed = await seededBatch({ client, db, ...context }, `tr_seed${scale}`, seedSize, 3 * 60_000);
  const seedIds = (await db.query<{ id: string }>('select id from entity where entity_type = $1 order by id', [seed.entityType])).map(
    (row) => Number(row.id),
  );

  const batch = await generatedBatch(context, `tr${scale}`, entities);
  const kept = await generatedBatch(context, `tr_kept${scale}`, KEPT);
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
    if (batchState?.status === 'COMPLETED' || batchState?.status === 'FAILED')
      throw new EndedTooSoon(`the batch finished (${batchState.status}) before Temporal could be stopped`);
    if (exportState.status === 'COMPLETED') throw new EndedTooSoon('the export finished before Temporal could be stopped');
    await stack.stopTemporal();
    stoppedAt = performance.now();
    log(
      `Temporal stopped; batch ${batchState?.status} ${batchState?.changesApplied}/${batchState?.changesTotal}, export ${exportState.status} (${exportState.entitiesWritten} written)`,
    );

    // While it is down: statuses answer (watched); a v2 batch is kept, a v1 batch refused with nothing kept.
    const answer = await client.submitBatch(kept.body);
    log(`a v2 batch sent while Temporal is down: ${answer.status} in ${(answer.ms / 1000).toFixed(1)} s`);
    check(
      answer.status === 200,
      `a v2 batch sent while Temporal is down answered ${answer.status || answer.error}: ${answer.body.slice(0, 200)}`,
    );
    check((await db.batch(kept.batchId))?.status === 'ACCEPTED', 'the v2 batch sent while Temporal is down is not kept ACCEPTED');
    const v1Id = randomUUID();
    const v1 = await client.request('/api/v1/batches', {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: batchXml([create('a', 'Prokop Holý', { entityType: `TR_V1_${context.tag}` })], { uuid: v1Id, version: 'v1' }),
    });
    log(`a v1 batch sent while Temporal is down: ${v1.status} in ${(v1.ms / 1000).toFixed(1)} s`);
    check(v1.status === 503, `a v1 batch sent while Temporal is down answered ${v1.status || v1.error}, expected 503`);
    check((await db.batch(v1Id)) === undefined, 'the refused v1 batch was kept');
    const exportDown = await client.request(`/api/v2/export/status/${exportId}`);
    check(exportDown.status === 200, `export status while Temporal is down answered ${exportDown.status || exportDown.error}`);

    // An API (re)started in the middle of the outage comes up and serves reads.
    await statusWatch.pausedWhile(async () => {
      await stack.killApi('SIGTERM');
      await stack.startApi();
    });
    const entity = await client.request(`/api/v2/entities/${seedIds[0]}`);
    check(entity.status === 200, `GET entity from an API started while Temporal is down answered ${entity.status || entity.error}`);
    log('an API restarted during the outage serves GET entity');
    await sleep(Math.max(0, DOWN_MS - (performance.now() - stoppedAt)));
    check(stack.unexpectedExits.length === 0, `a process exited during the outage: ${stack.unexpectedExits.join('; ')}`);

    await stack.startTemporal();
    figures.outage = `${((performance.now() - stoppedAt) / 1000).toFixed(0)} s`;
    log(`Temporal started again after ${figures.outage}`);

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
  log(
    `batch activity: ${describeAttempts(await workflows.activityAttempts(batch.batchId))}; export activity: ${describeAttempts(await workflows.activityAttempts(exportId))}`,
  );
  const keptEnded = await batchEnded(db.pool, kept.batchId, 3 * 60_000);
  figures['stop→kept batch COMPLETED'] = `${((performance.now() - stoppedAt) / 1000).toFixed(0)} s`;
  check(keptEnded.status === 'COMPLETED', `the batch kept during the outage ended ${keptEnded.status}: ${keptEnded.error}`);
  check(
    (await db.exactlyOnceViolations(kept.batchId, kept.entityType, KEPT)).length === 0,
    'the batch kept during the outage was not applied exactly once',
  );
  check(stack.unexpectedExits.length === 0, `a process exited: ${stack.unexpectedExits.join('; ')}`);
}
