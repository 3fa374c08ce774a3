// 5. The worker dies (SIGKILL) in the middle of writing an export file: after
// a restart the export completes with a whole, valid file, and the partial
// file of the lost attempt is gone.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { generatedBatch } from '../lib/data.ts';
import { verifyExport } from '../lib/exports.ts';
import { check, type Scenario } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { GiveUp, pollUntil, sleep } from '../lib/wait.ts';

const ENTITIES = 20_000;
/** Batches loaded before the export; the export must last long enough to be caught mid-file. */
const BATCHES = 1;

export const exportWorkerKill: Scenario = {
  name: 'export-worker-kill',
  title: `worker SIGKILLed while writing a snapshot export of ${(ENTITIES * BATCHES).toLocaleString('en')} entities, then restarted`,
  timeoutMs: 10 * 60_000,
  async run({ stack, client, db, log, figures, workflows, ...context }) {
    for (let index = 0; index < BATCHES; index += 1) {
      const batch = await generatedBatch(context, `ex${index}`, ENTITIES);
      await client.submitBatchOk(batch.body);
      const done = await client.waitBatch(batch.batchId, 5 * 60_000);
      check(done.status === 'COMPLETED', `loading batch ${batch.batchId} ended ${done.status}`);
    }
    const ids = (await db.query<{ id: string }>('select id from entity order by id')).map((row) => Number(row.id));
    log(`loaded ${ids.length} entities`);

    const exportId = await client.startExportOk('snapshots', []);
    const caught = await pollUntil(
      async () => {
        const row = await db.exportRow(exportId);
        if (row?.status === 'COMPLETED' || row?.status === 'FAILED') throw new GiveUp(`the export finished (${row.status}) before the worker could be killed`);
        return row?.status === 'RUNNING' && row.entitiesWritten > 0 ? row : undefined;
      },
      { timeoutMs: 2 * 60_000, intervalMs: 20, what: 'the export to be RUNNING with entitiesWritten > 0' },
    );
    await stack.killWorker('SIGKILL');
    const killedAt = performance.now();
    const partial = readdirSync(stack.exportDir).filter((name) => name.startsWith(`.${exportId}.attempt-`));
    const partialBytes = partial.map((name) => statSync(join(stack.exportDir, name)).size);
    log(`worker killed at entitiesWritten ${caught.entitiesWritten}; partial file(s) ${partial.map((name, i) => `${name} (${partialBytes[i]} bytes)`).join(', ')}`);
    check(partial.length === 1 && partialBytes[0]! > 0, 'no partial file of the running attempt was found: the kill was not mid-file');
    const early = await client.exportStatus(exportId);
    check(early.status === 'RUNNING', `export status after the kill is ${early.status}`);
    check(readdirSync(stack.exportDir).every((name) => name !== `${exportId}.xml`), 'a finished file was published by a killed attempt');

    await sleep(1000);
    stack.startWorker();
    log('worker restarted; waiting for the heartbeat timeout and the retry');
    const final = await client.waitExport(exportId, 5 * 60_000);
    figures['kill→COMPLETED'] = `${((performance.now() - killedAt) / 1000).toFixed(0)} s`;
    log(`export ${final.status}: ${final.entitiesWritten} entities, ${(final.bytes / 2 ** 20).toFixed(1)} MB`);
    const attempts = await workflows.activityAttempts(exportId);
    log(`activities in the workflow history: ${describeAttempts(attempts)}`);
    check(attempts.some((a) => a.attempt >= 2), `the export activity was not retried (${describeAttempts(attempts)})`);
    await verifyExport({ client, stack }, final, { kind: 'snapshot', entityIds: ids });
  },
};
