// 8. Two APIs behind one client list; one dies (SIGKILL) while small and
// large batches are being uploaded to it. A client whose upload got no
// answer sends it again to the other API: no answer from either is a 5xx,
// the resend is accepted (200) or recognised as already there (409), every
// batch completes exactly once, and no batch is left stranded.
import { freePort } from '../../../scripts/lib/ports.ts';
import { ServiceClient, type Answer } from '../lib/client.ts';
import { generatedBatch, type GeneratedBatch } from '../lib/data.ts';
import { check, type Scenario } from '../lib/scenario.ts';
import { startExtraApi } from '../lib/processes.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil, sleep } from '../../support/poll.ts';

const SMALL = 120;
const SMALL_SIZE = 20;
const CLIENTS = 8;
const LARGE = 3;
const LARGE_SIZE = 2_500;

interface Upload {
  batch: GeneratedBatch;
  answers: Array<{ api: 'A' | 'B'; answer: Answer }>;
}

export const apiFailover: Scenario = {
  name: 'api-failover',
  title: `two APIs; one SIGKILLed with ${CLIENTS} clients' small uploads and ${LARGE} large ones in flight; the clients resend to the other`,
  timeoutMs: 8 * 60_000,
  async run(context) {
    const { stack, client, db, log, figures } = context;
    const other = await startExtraApi(stack, await freePort());
    const clientB = new ServiceClient({ apiUrl: other.url });
    try {
      const small: GeneratedBatch[] = [];
      for (let index = 0; index < SMALL; index += 1) small.push(await generatedBatch(context, `af${index}`, SMALL_SIZE));
      const large: GeneratedBatch[] = [];
      for (let index = 0; index < LARGE; index += 1) large.push(await generatedBatch(context, `afl${index}`, LARGE_SIZE));
      log(`APIs A ${stack.apiUrl} and B ${other.url}; ${SMALL} small and ${LARGE} large batches generated`);

      const uploads: Upload[] = [];
      let killed = false;
      /** Sends to A while it lives, and to B after it did not answer: what a client with a list of two APIs does. */
      const send = async (batch: GeneratedBatch): Promise<void> => {
        const upload: Upload = { batch, answers: [] };
        uploads.push(upload);
        if (!killed) {
          const answer = await client.submitBatch(batch.body);
          upload.answers.push({ api: 'A', answer });
          if (answer.status !== 0) return;
        }
        upload.answers.push({ api: 'B', answer: await clientB.submitBatch(batch.body) });
      };

      let next = 0;
      let answered = 0;
      const clients = Array.from({ length: CLIENTS }, async () => {
        while (next < small.length) {
          await send(small[next++]!);
          answered += 1;
        }
      });
      await pollUntil(async () => (answered >= CLIENTS * 2 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: 'small uploads to flow',
      });
      const largeSent = large.map((batch) => send(batch));
      await sleep(300);
      await stack.killApi('SIGKILL');
      killed = true;
      const killedAt = performance.now();
      log(`API A killed after ${answered} answers`);
      await Promise.all([...clients, ...largeSent]);

      const all = uploads.flatMap((upload) => upload.answers.map((entry) => ({ ...entry, batch: upload.batch })));
      const serverErrors = all.filter(({ answer }) => answer.status >= 500);
      check(
        serverErrors.length === 0,
        `uploads answered 5xx: ${serverErrors.map(({ api, answer }) => `${api} ${answer.status} ${answer.body.slice(0, 120)}`).join(' | ')}`,
      );
      const resent = uploads.filter((upload) => upload.answers.length === 2);
      const resentAnswers = resent.map((upload) => upload.answers[1]!.answer);
      const unaccepted = resentAnswers.filter(
        (answer) => answer.status !== 200 && !(answer.status === 409 && answer.body.includes('BatchAlreadyExists')),
      );
      check(
        unaccepted.length === 0,
        `resends to B answered ${unaccepted.map((answer) => `${answer.status || answer.error} ${answer.body.slice(0, 120)}`).join(' | ')}`,
      );
      const lost = uploads.filter((upload) => upload.answers.every(({ answer }) => answer.status === 0));
      check(lost.length === 0, `${lost.length} uploads got no answer from either API`);
      figures['resent to B'] =
        `${resent.length} (${resentAnswers.filter((answer) => answer.status === 200).length}× 200, ${resentAnswers.filter((answer) => answer.status === 409).length}× 409)`;
      log(`${uploads.length} uploads; ${resent.length} got no answer from A and were resent to B: ${figures['resent to B']}`);

      // Every batch completes, exactly once, and nothing stays ACCEPTED or PROCESSING.
      for (const { batch } of uploads) {
        const row = await batchEnded(db.pool, batch.batchId, 3 * 60_000);
        check(row.status === 'COMPLETED', `batch ${batch.batchId} ended ${row.status}: ${row.error}`);
        const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, batch.count);
        check(violations.length === 0, `batch ${batch.batchId} not applied exactly once: ${violations.join('; ')}`);
      }
      figures['kill→all COMPLETED'] = `${((performance.now() - killedAt) / 1000).toFixed(0)} s`;
      const open = await db.one<{ n: string }>(`select count(*) as n from batch where status in ('ACCEPTED', 'PROCESSING')`);
      check(Number(open.n) === 0, `${open.n} batches stranded ACCEPTED or PROCESSING`);
      const rows = await db.one<{ n: string }>('select count(*) as n from batch');
      check(Number(rows.n) === uploads.length, `${rows.n} batch rows for ${uploads.length} batches`);
    } finally {
      await other.stop();
    }
    check(other.crashed() === undefined, other.crashed() ?? '');
  },
};
