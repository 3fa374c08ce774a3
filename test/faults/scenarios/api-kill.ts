// 2. The API dies (SIGKILL) while batches are applied, exports are written
// and more batches are being uploaded, and is started again: every batch a
// client was told about (200) completes, a batch whose upload was cut off can
// be sent again (200, or 409 when the first copy is running), none is applied
// twice, both exports complete, and status and result answer afterwards.
// The narrowest moment of a kill (the batch row committed, its workflow not
// yet started) is also set up exactly, since a real kill hits it only
// sometimes: sending that batch again must start it.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { inTransaction } from '../../../db/sql.ts';
import { storeBatch } from '../../../db/batches.ts';
import { generatedBatch, type GeneratedBatch } from '../lib/data.ts';
import { verifyExport } from '../lib/exports.ts';
import { check, type Scenario, type ScenarioContext } from '../lib/scenario.ts';
import type { Answer } from '../lib/client.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil, sleep } from '../../support/poll.ts';

const SEED = 3_000;
const ACKNOWLEDGED = 3;
const IN_FLIGHT = 4;
const PER_BATCH = 2_500;
/** Small batches sent by concurrent clients around the kill. */
const SMALL = 200;
const SMALL_SIZE = 20;
const SMALL_CLIENTS = 12;

export const apiKill: Scenario = {
  name: 'api-kill',
  title: `API SIGKILLed with ${ACKNOWLEDGED} batches and 2 exports running, ${IN_FLIGHT} large uploads and ${SMALL_CLIENTS} clients' small ones in flight, then restarted`,
  timeoutMs: 10 * 60_000,
  async run(context) {
    const { stack, client, db, log, figures } = context;
    // Before: a transaction to export revisions from, then the records both exports cover.
    const before = await generatedBatch(context, 'ak_before', 10);
    await client.submitBatchOk(before.body);
    check((await batchEnded(db.pool, before.batchId, 2 * 60_000)).status === 'COMPLETED', 'the first seed batch did not complete');
    const seed = await generatedBatch(context, 'ak_seed', SEED);
    await client.submitBatchOk(seed.body);
    check((await batchEnded(db.pool, seed.batchId, 3 * 60_000)).status === 'COMPLETED', 'the second seed batch did not complete');
    const fromTransId = /transaction="([^"]+)"/.exec(await client.batchResult(before.batchId))?.[1];
    check(fromTransId, 'the result of the first seed batch names no transaction');
    const seedIds = (await db.query<{ id: string }>('select id from entity where entity_type = $1 order by id', [seed.entityType])).map(
      (row) => Number(row.id),
    );

    // The crash between the commit and the workflow start, made exact: the
    // row and body stored as POST stores them, and no workflow.
    const stranded = await generatedBatch(context, 'ak_stranded', 50);
    await strand(context, stranded, seed.batchId);

    const large: GeneratedBatch[] = [];
    for (let index = 0; index < ACKNOWLEDGED + IN_FLIGHT; index += 1) large.push(await generatedBatch(context, `ak${index}`, PER_BATCH));
    const small: GeneratedBatch[] = [];
    for (let index = 0; index < SMALL; index += 1) small.push(await generatedBatch(context, `aks${index}`, SMALL_SIZE));
    for (const batch of large.slice(0, ACKNOWLEDGED)) await client.submitBatchOk(batch.body);
    const snapshotId = await client.startExportOk('snapshots', seedIds);
    const revisionsId = await client.startExportOk('revisions', seedIds, `?fromTransId=${fromTransId}`);

    // Uploads in flight when the API dies: a stream of small ones from
    // concurrent clients (some between storing the batch and starting its
    // workflow), and large bodies being received or validated.
    const sent: Array<{ batch: GeneratedBatch; answer: Promise<Answer> }> = [];
    let next = 0;
    let answered = 0;
    let killed = false;
    const clients = Array.from({ length: SMALL_CLIENTS }, async () => {
      while (!killed && next < small.length) {
        const batch = small[next++]!;
        const answer = client.submitBatch(batch.body);
        sent.push({ batch, answer });
        await answer;
        answered += 1;
      }
    });
    await pollUntil(async () => (answered >= SMALL_CLIENTS ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'small uploads to flow',
    });
    sent.push(...large.slice(ACKNOWLEDGED).map((batch) => ({ batch, answer: client.submitBatch(batch.body) })));
    await sleep(300);
    const running = await db.query<{ status: string; n: string }>(
      'select status, count(*) as n from batch group by status order by status',
    );
    await stack.killApi('SIGKILL');
    killed = true;
    const killedAt = performance.now();
    await Promise.all(clients);
    const answers = await Promise.all(sent.map((upload) => upload.answer));
    const cut = sent.filter((_, index) => answers[index]!.status === 0).map((upload) => upload.batch);
    const acknowledged = sent.filter((_, index) => answers[index]!.status === 200).map((upload) => upload.batch);
    const other = answers.filter((answer) => answer.status !== 0 && answer.status !== 200);
    log(
      `API killed; batches by status then: ${running.map((row) => `${row.status} ${row.n}`).join(', ')}; ` +
        `${sent.length} uploads in flight or done: ${acknowledged.length} answered 200, ${cut.length} no answer, ${other.length} other`,
    );
    check(other.length === 0, `uploads answered ${other.map((answer) => answer.status).join(', ')}: ${other[0]?.body.slice(0, 200)}`);

    await stack.startApi();
    figures['API restart'] = `${((performance.now() - killedAt) / 1000).toFixed(1)} s`;
    log(`API up again after ${((performance.now() - killedAt) / 1000).toFixed(1)} s`);

    // Rows the kill left between the commit and the workflow start: nothing would apply them until sent again.
    let strandedByKill = 0;
    for (const batch of cut) {
      const row = await db.batch(batch.batchId);
      if (row?.status === 'ACCEPTED' && (await context.workflows.status(batch.batchId)) === 'NOT_FOUND') strandedByKill += 1;
    }
    figures['stranded by the kill'] = `${strandedByKill} of ${cut.length} cut uploads`;
    const resentStranded = await client.submitBatch(stranded.body);
    check(
      resentStranded.status === 200,
      `resending a batch stored without a workflow answered ${resentStranded.status}: ${resentStranded.body.slice(0, 200)}`,
    );
    // A client that got no answer sends the same body again: 200, or 409 when the first copy is running.
    const resent: string[] = [];
    for (const batch of cut) {
      const again = await client.submitBatch(batch.body);
      const code = again.status === 409 ? (JSON.parse(again.body) as { code?: string }).code : undefined;
      resent.push(code ? `${again.status} ${code}` : describe(again));
      check(
        again.status === 200 || code === 'BatchAlreadyExists',
        `resending a cut-off upload answered ${again.status}: ${again.body.slice(0, 200)}`,
      );
    }
    log(
      `${strandedByKill} cut-off upload(s) had a stored row but no workflow; resent all ${cut.length}: ${tally(resent)}; the stranded one: 200`,
    );

    const batches = [
      stranded,
      ...large,
      ...acknowledged.filter((batch) => !large.includes(batch)),
      ...cut.filter((batch) => !large.includes(batch)),
    ];
    for (const batch of batches) {
      const final = await waitOrStuck(context, batch.batchId);
      check(final === 'COMPLETED', `batch ${batch.batchId} ended ${final}`);
      const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, batch.count);
      check(violations.length === 0, `batch ${batch.batchId} not applied exactly once: ${violations.join('; ')}`);
      const result = await client.batchResult(batch.batchId);
      check(result.includes('batchChangeSuccess'), `the result of ${batch.batchId} is not a success document`);
    }
    const total = await db.one<{ n: string }>('select count(*) as n from batch');
    check(Number(total.n) === batches.length + 2, `${total.n} batch rows, expected ${batches.length + 2}`);

    await verifyExport(context, await client.waitExport(snapshotId, 3 * 60_000), { kind: 'snapshot', entityIds: seedIds });
    await verifyExport(context, await client.waitExport(revisionsId, 3 * 60_000), { kind: 'revisions', entityIds: seedIds });
    log('every batch completed once; both exports verified');
  },
};

/** Stores a batch exactly as POST /batches does before it starts the workflow (same principal as `like`). */
async function strand(context: ScenarioContext, batch: GeneratedBatch, like: string): Promise<void> {
  const { submittedBy } = await context.db.one<{ submittedBy: string }>('select submitted_by as "submittedBy" from batch where id = $1', [
    like,
  ]);
  const pool = new pg.Pool({ connectionString: context.stack.databaseUrl, max: 1 });
  try {
    await inTransaction(pool, async (client) => {
      const stored = await storeBatch(client, {
        id: batch.batchId,
        sha256: createHash('sha256').update(batch.body).digest('hex'),
        apiVersion: 'v2',
        submittedBy,
        force: false,
        changesTotal: batch.count,
        body: batch.body,
      });
      check(stored, 'the stranded batch could not be stored');
    });
  } finally {
    await pool.end();
  }
}

function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([value, n]) => `${n}× ${value}`).join(', ') || 'none';
}

function describe(answer: Answer): string {
  return answer.status === 0 ? 'no answer' : String(answer.status);
}

/**
 * Waits for a batch to finish; fails at once when it is stuck: ACCEPTED in
 * the database while Temporal has no workflow for it (nothing would ever
 * apply it).
 */
async function waitOrStuck(context: ScenarioContext, batchId: string): Promise<string> {
  let stuckSince: number | undefined;
  const waiting = pollUntil(
    async () => {
      const row = await context.db.batch(batchId);
      check(row, `batch ${batchId} is not stored`);
      if (row.status === 'COMPLETED' || row.status === 'FAILED') return row.status;
      if (row.status === 'ACCEPTED' && (await context.workflows.status(batchId)) === 'NOT_FOUND') {
        stuckSince ??= Date.now();
        // A workflow start may be a moment behind the row; ten seconds without one is a lost batch.
        check(Date.now() - stuckSince < 10_000, `batch ${batchId} is stuck: ACCEPTED in the database, but Temporal has no workflow for it`);
      }
      return undefined;
    },
    { timeoutMs: 4 * 60_000, intervalMs: 500, what: `batch ${batchId} to finish` },
  );
  return waiting.catch(async (error: unknown) => {
    const row = await context.db.batch(batchId);
    throw new Error(`${(error as Error).message}; row ${JSON.stringify(row)}; ${await context.workflows.diagnose(batchId)}`);
  });
}
