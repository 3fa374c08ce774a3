// 1. The worker dies (SIGKILL) while it writes a 20k-entity batch, and is
// started again: the batch is applied exactly once, and its status answers
// all along.
import { watchBatchStatus } from '../lib/client.ts';
import { generatedBatch } from '../lib/data.ts';
import { check, type Scenario } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { watchAllOrNothing } from '../lib/visibility.ts';
import { GiveUp, pollUntil, sleep } from '../lib/wait.ts';

const ENTITIES = 20_000;

export const workerKill: Scenario = {
  name: 'worker-kill',
  title: `worker SIGKILLed while applying a ${ENTITIES.toLocaleString('en')}-entity batch, then restarted`,
  timeoutMs: 10 * 60_000,
  async run({ stack, client, db, log, figures, workflows, ...context }) {
    const batch = await generatedBatch(context, 'wk', ENTITIES);
    let visible = { reads: 0, partial: [] as number[], errors: [] as string[] };
    let polled = { polls: 0, bad: [] as string[], seen: [] as string[] };
    log(`generated ${batch.count} creates (${(batch.body.length / 2 ** 20).toFixed(1)} MB) of type ${batch.entityType}`);
    const visibility = watchAllOrNothing(db, batch.entityType, ENTITIES);
    const statusWatch = watchBatchStatus(client, batch.batchId, 200);
    try {
      await client.submitBatchOk(batch.body);
      const caught = await pollUntil(
        async () => {
          const row = await db.batch(batch.batchId);
          if (row?.status === 'COMPLETED' || row?.status === 'FAILED') throw new GiveUp(`the batch finished (${row.status}) before the worker could be killed`);
          return row?.status === 'PROCESSING' && row.changesApplied > 0 ? row : undefined;
        },
        { timeoutMs: 5 * 60_000, intervalMs: 50, what: 'the batch to be PROCESSING with changesApplied > 0' },
      );
      await stack.killWorker('SIGKILL');
      const killedAt = performance.now();
      log(`worker killed at changesApplied ${caught.changesApplied}/${caught.changesTotal}`);
      check((await db.countOfType(batch.entityType)) === 0, 'entities of the batch are visible after the worker died mid-transaction');

      await sleep(1000);
      stack.startWorker();
      log('worker restarted; waiting for Temporal to time the lost attempt out (heartbeat timeout) and retry it');
      const final = await client.waitBatch(batch.batchId, 6 * 60_000);
      const recovery = (performance.now() - killedAt) / 1000;
      log(`batch ${final.status} ${recovery.toFixed(1)} s after the kill`);
      check(final.status === 'COMPLETED', `the batch ended ${final.status}`);
      figures['kill→COMPLETED'] = `${recovery.toFixed(0)} s`;
    } finally {
      await visibility.stop().then((seen) => (visible = seen));
      await statusWatch.stop().then((seen) => (polled = seen));
    }
    log(`status polled ${polled.polls}× (${polled.seen.join(' → ')}); entity count read ${visible.reads}×`);
    figures['status polls'] = `${polled.polls}, bad ${polled.bad.length}`;
    check(polled.bad.length === 0, `GET status did not answer well ${polled.bad.length}×: ${polled.bad.slice(0, 5).join(' | ')}`);
    check(visible.partial.length === 0, `a partial batch was visible: counts ${visible.partial.slice(0, 10).join(', ')}`);

    const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, ENTITIES);
    check(violations.length === 0, `not applied exactly once: ${violations.join('; ')}`);
    const attempts = await workflows.activityAttempts(batch.batchId);
    log(`activities in the workflow history: ${describeAttempts(attempts)}`);
    check(attempts.some((a) => a.attempt >= 2), `the apply activity was not retried (${describeAttempts(attempts)}): the kill missed it`);
    const result = await client.batchResult(batch.batchId);
    check(result.includes('batchChangeSuccess'), `the result is not a success document: ${result.slice(0, 300)}`);
  },
};
