import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../db/sql.ts';
import { repairStrandedJobs } from '../../services/batches/recovery.ts';
import { storeBatch } from '../../db/batches.ts';
import { startBatchRun } from '../../services/batches/workflow.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';

// An API that stops between storing a batch and starting its workflow leaves
// the batch ACCEPTED with no workflow. The sweep of every API starts it.
describe('batches left ACCEPTED without a workflow', () => {
  // Test files share the database: a type of its own keeps PreferredNameExists out of the way.
  const entityType = `RECOVERY-${randomUUID()}`;
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** Stores a batch as the API does before it starts the workflow, and stops there. */
  async function storeWithoutWorkflow(name: string): Promise<string> {
    const id = randomUUID();
    const body = Buffer.from(batchXml([create('a', name, { entityType })], { uuid: id }));
    const pool = harness.db.pool;
    await inTransaction(pool, (client) =>
      storeBatch(client, {
        id,
        sha256: createHash('sha256').update(body).digest('hex'),
        apiVersion: 'v2',
        submittedBy: 'test-admin',
        force: false,
        changesTotal: 1,
        body,
      }),
    );
    await pool.query(`update batch set submitted_at = now() - interval '2 minutes' where id = $1`, [id]);
    return id;
  }

  const statusOf = async (id: string) => (await harness.db.batches.find(id))?.status;

  it('starts the workflow of a stranded batch, which then completes once', async () => {
    const id = await storeWithoutWorkflow('Prokop Holý');
    const fresh = await storeWithoutWorkflow('Jan Roháč z Dubé');
    await harness.sql(`update batch set submitted_at = now() where id = $1`, [fresh]);

    const { started } = await repairStrandedJobs(harness);
    expect(started).toContain(id);
    // One stored a moment ago may still be on its way to its own start.
    expect(started).not.toContain(fresh);
    expect((await batchEnded(harness, id)).status).toBe('COMPLETED');
    expect(await statusOf(fresh)).toBe('ACCEPTED');
    const [{ n }] = (await harness.sql<{ n: string }>('select count(*) as n from revision where batch_id = $1', [id])) as [{ n: string }];
    expect(Number(n)).toBe(1);
    expect((await repairStrandedJobs(harness)).started).not.toContain(id);
  });

  it('leaves a workflow that exists alone, so sweeps may overlap', async () => {
    const id = await storeWithoutWorkflow('Jan Žižka z Trocnova');
    // A run that no worker takes: it exists, and the batch stays ACCEPTED for as long as the test needs.
    await startBatchRun(
      { ...harness, config: { ...harness.config, TEMPORAL_TASK_QUEUE: `nobody-${id}` } },
      { batchId: id, submitter: 'test-admin', apiVersion: 'v2', changes: 1, bytes: 1 },
      'FAIL',
    );
    const handle = harness.temporal.workflow.getHandle(id);
    const waiting = (await handle.describe()).runId;

    expect((await repairStrandedJobs(harness)).started).toContain(id);
    expect((await handle.describe()).runId).toBe(waiting);
    expect(await statusOf(id)).toBe('ACCEPTED');

    // An operator terminates that run: the batch ends FAILED saying so, and no new run starts.
    await handle.terminate('test: the run no worker takes');
    const repairs = await repairStrandedJobs(harness);
    expect(repairs.ended).toContain(id);
    expect(repairs.started).not.toContain(id);
    const batch = await harness.db.batches.find(id);
    expect(batch).toMatchObject({ status: 'FAILED', result: null });
    expect(batch?.error).toContain('terminated by an operator');
    expect((await handle.describe()).runId).toBe(waiting);
  });

  it('starts a batch again whose workflow Temporal no longer knows while its row says PROCESSING', async () => {
    const id = await storeWithoutWorkflow('Mikuláš z Husi');
    await harness.sql(`update batch set status = 'PROCESSING' where id = $1`, [id]);
    expect((await repairStrandedJobs(harness)).started).toContain(id);
    expect((await batchEnded(harness, id)).status).toBe('COMPLETED');
  });

  it('pages through every stranded batch in one sweep, not only the first hundred', async () => {
    // The run's database is shared: rows of other files count too, so this only needs all of these to be started.
    const ids: string[] = [];
    for (let index = 0; index < 120; index += 1) ids.push(await storeWithoutWorkflow(`Stranded ${index} ${randomUUID()}`));
    // Their workflows run on a queue no worker polls: started, never applied.
    const { started } = await repairStrandedJobs({
      ...harness,
      config: { ...harness.config, TEMPORAL_TASK_QUEUE: `nobody-${randomUUID()}` },
    });
    expect(ids.filter((id) => !started.includes(id))).toEqual([]);
    for (const id of ids) await harness.temporal.workflow.getHandle(id).terminate('test over');
  });
});
