// 7. An operator terminates, in Temporal, the workflow of a batch while its
// 20k entities are being written, and the workflow of an export while its
// file is being written: the batch never commits (not one entity visible,
// ever), both end FAILED saying they were terminated within seconds, no
// export file is left, and the status answers all along.
import { readdirSync } from 'node:fs';
import { watchBatchStatus } from '../lib/client.ts';
import { generatedBatch, seededBatch } from '../lib/data.ts';
import { batchWriting, exportWriting, check, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { watchAllOrNothing } from '../lib/visibility.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil, sleep } from '../../support/poll.ts';

const ENTITIES = 10_000;
/** An activity learns of a terminate at its next heartbeat (every second), or once a CPU-bound step lets its timer run: room for a loaded machine. */
const NOTICED_WITHIN_S = 30;

export const operatorTerminate = scalingScenario(
  {
    name: 'operator-terminate',
    title: `an operator terminates the workflows of a ${ENTITIES.toLocaleString('en')}-entity batch and of an export while they write`,
    timeoutMs: 8 * 60_000,
  },
  runAtScale,
);

/** The scenario with jobs `scale` times their base size. */
async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  // Records to export: a batch that completes.
  await seededBatch({ client, db, ...context }, `ot_seed${scale}`, entities, 5 * 60_000);

  const exportId = await client.startExportOk('snapshots', []);
  await exportWriting(db, exportId, 'it could be terminated', 2 * 60_000);
  await workflows.terminate(exportId, 'fault suite: an operator stops the export');
  const exportTerminatedAt = performance.now();
  const exportRow = await pollUntil(
    async () => {
      const row = await db.exportRow(exportId);
      return row?.status === 'FAILED' || row?.status === 'COMPLETED' ? row : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `export ${exportId} to end after its workflow was terminated` },
  );
  const exportNoticed = (performance.now() - exportTerminatedAt) / 1000;
  figures['export terminate→FAILED'] = `${exportNoticed.toFixed(1)} s`;
  log(`export ${exportRow.status} ${exportNoticed.toFixed(1)} s after the terminate: ${exportRow.error}`);
  check(
    exportRow.status === 'FAILED' && exportRow.error?.includes('terminated'),
    `the terminated export ended ${exportRow.status}: ${exportRow.error}`,
  );
  check(exportNoticed <= NOTICED_WITHIN_S, `the export activity took ${exportNoticed.toFixed(0)} s to notice the terminate`);
  check(
    readdirSync(stack.exportDir).every((name) => !name.includes(exportId)),
    `files of the terminated export are left: ${readdirSync(stack.exportDir).join(', ')}`,
  );

  const batch = await generatedBatch(context, `ot${scale}`, entities);
  let visible: { reads: number; partial: number[]; errors: string[] };
  let polled: { polls: number; bad: string[]; seen: string[] };
  const visibility = watchAllOrNothing(db, batch.entityType, entities);
  const statusWatch = watchBatchStatus(client, batch.batchId, 200);
  try {
    await client.submitBatchOk(batch.body);
    const caught = await batchWriting(db, batch.batchId, 'it could be terminated', 5 * 60_000);
    await workflows.terminate(batch.batchId, 'fault suite: an operator stops the batch');
    const terminatedAt = performance.now();
    log(`batch workflow terminated at changesApplied ${caught.changesApplied}/${caught.changesTotal}`);
    const final = await batchEnded(db.pool, batch.batchId, 60_000);
    const noticed = (performance.now() - terminatedAt) / 1000;
    figures['batch terminate→FAILED'] = `${noticed.toFixed(1)} s`;
    log(`batch ${final.status} ${noticed.toFixed(1)} s after the terminate: ${final.error}`);
    check(final.status === 'FAILED' && final.error?.includes('terminated'), `the terminated batch ended ${final.status}: ${final.error}`);
    check(noticed <= NOTICED_WITHIN_S, `the batch activity took ${noticed.toFixed(0)} s to notice the terminate`);
    // Nothing comes later either: no retry, no commit.
    await sleep(3000);
  } finally {
    visible = await visibility.stop();
    polled = await statusWatch.stop();
  }
  check((await db.countOfType(batch.entityType)) === 0, 'entities of the terminated batch were written');
  const { n } = await db.one<{ n: string }>('select count(*) as n from transaction where batch_id = $1', [batch.batchId]);
  check(Number(n) === 0, 'the terminated batch has a transaction');
  check(visible.partial.length === 0, `a partial batch was visible: counts ${visible.partial.slice(0, 10).join(', ')}`);
  check(polled.bad.length === 0, `GET status did not answer well ${polled.bad.length}×: ${polled.bad.slice(0, 5).join(' | ')}`);
  check((await workflows.status(batch.batchId)) === 'TERMINATED', 'the batch workflow is not TERMINATED');
  const result = await client.request(`/api/v2/batches/${batch.batchId}/result`);
  check(
    result.status === 200 && result.body.includes('terminated'),
    `the result of the terminated batch does not say so: ${result.status} ${result.body.slice(0, 300)}`,
  );
  log(`status polled ${polled.polls}× (${polled.seen.join(' → ')}); entity count read ${visible.reads}×, always 0`);
}
