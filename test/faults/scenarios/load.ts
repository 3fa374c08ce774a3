// 6. Load: 8 clients submit 200 batches of 100 new entities between them
// (each waits for its batch before sending the next) while 32 clients read
// (GET entity, POST search, GET updates), for at most 60 s. No 5xx, every
// batch completes, the entities are exactly the creates sent; read latency
// and batch throughput are reported.
import type { Answer } from '../lib/client.ts';
import { generatedBatch, type GeneratedBatch } from '../lib/data.ts';
import { check, type Scenario } from '../lib/scenario.ts';
import { describeAttempts } from '../lib/workflows.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { percentile, sleep } from '../../support/poll.ts';

const SUBMITTERS = 8;
const READERS = 32;
const BATCHES = 200;
const PER_BATCH = 100;
const WINDOW_MS = 60_000;
const SURNAMES = ['Novák', 'Svoboda', 'Dvořák', 'Černý', 'Procházka', 'Kučera', 'Veselý', 'Horák', 'Němec', 'Král'];

type ReadKind = 'entity' | 'search' | 'updates';

export const load: Scenario = {
  name: 'load',
  title: `${SUBMITTERS} submitters (${BATCHES} batches × ${PER_BATCH} new entities) and ${READERS} readers for at most ${WINDOW_MS / 1000} s`,
  timeoutMs: 8 * 60_000,
  async run(context) {
    const { client, db, log, figures, tag } = context;
    // Something to read: 1,000 records, and two transactions for the change feed.
    const seedType = `FAULT_LOAD_SEED_${tag}`.toUpperCase();
    const seed = await generatedBatch(context, 'ld_seed', 1000, { entityType: seedType });
    const later = await generatedBatch(context, 'ld_later', 100, { entityType: seedType });
    for (const batch of [seed, later]) {
      await client.submitBatchOk(batch.body);
      check((await batchEnded(db.pool, batch.batchId, 2 * 60_000)).status === 'COMPLETED', `seed batch ${batch.batchId} did not complete`);
    }
    const transaction = async (batchId: string) =>
      (await db.one<{ uuid: string }>('select uuid from transaction where batch_id = $1', [batchId])).uuid;
    const [fromTransId, toTransId] = [await transaction(seed.batchId), await transaction(later.batchId)];
    const seedIds = (await db.query<{ id: string }>('select id from entity where entity_type = $1', [seedType])).map((row) => row.id);

    const loadTypes = Array.from({ length: SUBMITTERS }, (_, index) => `FAULT_LOAD${index}_${tag}`.toUpperCase());
    const batches: GeneratedBatch[] = [];
    for (let index = 0; index < BATCHES; index += 1) {
      batches.push(await generatedBatch(context, `ld${index}`, PER_BATCH, { entityType: loadTypes[index % SUBMITTERS] }));
    }
    log(`seeded ${seedIds.length} records; ${BATCHES} batches of ${PER_BATCH} ready`);

    const bad: string[] = [];
    const noteBad = (what: string, answer: Answer) => {
      if (answer.status === 0 || answer.status >= 500)
        bad.push(`${what}: ${answer.status || 'no answer'} ${answer.error ?? answer.body.slice(0, 160)}`);
    };
    const latencies: Record<ReadKind, number[]> = { entity: [], search: [], updates: [] };
    const unexpected: string[] = [];
    const outcomes = new Map<string, string>();
    /** Seconds from POST to the status poll that saw it finished. */
    const batchSeconds = new Map<string, number>();
    const started = performance.now();
    const deadline = started + WINDOW_MS;
    let next = 0;
    let lastFinished = started;
    let submittersDone = false;

    const submitter = async () => {
      while (next < batches.length && performance.now() < deadline) {
        const batch = batches[next++]!;
        const posted = performance.now();
        const answer = await client.submitBatch(batch.body);
        noteBad('POST batch', answer);
        if (answer.status !== 200) {
          outcomes.set(batch.batchId, `POST ${answer.status || 'no answer'}`);
          continue;
        }
        // Poll until it finished; every poll is a request of the load too.
        for (let poll = 0; poll < 1200; poll += 1) {
          const status = await client.request(`/api/v2/batches/${batch.batchId}/detail`, {}, 10_000);
          noteBad('GET status', status);
          const state = status.status === 200 ? (JSON.parse(status.body) as { status: string }).status : undefined;
          if (state === 'COMPLETED' || state === 'FAILED') {
            outcomes.set(batch.batchId, state);
            lastFinished = performance.now();
            batchSeconds.set(batch.batchId, (lastFinished - posted) / 1000);
            break;
          }
          await sleep(100);
        }
      }
    };

    const reader = async (index: number) => {
      for (let round = 0; !submittersDone && performance.now() < deadline && round < 100_000; round += 1) {
        const kind: ReadKind = (['entity', 'search', 'updates'] as const)[(index + round) % 3]!;
        let answer: Answer;
        if (kind === 'entity') {
          answer = await client.request(`/api/v2/entities/${seedIds[(index * 7919 + round * 104_729) % seedIds.length]}`, {}, 10_000);
        } else if (kind === 'search') {
          // Half full-text, half a name condition (EXACT), both within the seeded type.
          const text = SURNAMES[(index + round) % SURNAMES.length]!;
          const fulltext = round % 2 === 0;
          const body = fulltext
            ? { types: [seedType], text }
            : { types: [seedType], cond: { condType: 'index', name: 'name', comparator: 'CT_CONTAIN', value: text } };
          answer = await client.request(
            `/api/v2/search?page=1&pageSize=20&searchType=${fulltext ? 'FULLTEXT' : 'EXACT'}`,
            { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
            10_000,
          );
        } else {
          answer = await client.request(
            `/api/v2/updates?fromTransId=${fromTransId}&toTransId=${toTransId}&page=1&pageSize=100`,
            {},
            10_000,
          );
        }
        noteBad(`read ${kind}`, answer);
        if (answer.status === 200) latencies[kind].push(answer.ms);
        else if (answer.status !== 0 && answer.status < 500) unexpected.push(`${kind}: ${answer.status} ${answer.body.slice(0, 160)}`);
      }
    };

    const readers = Array.from({ length: READERS }, (_, index) => reader(index));
    await Promise.all(Array.from({ length: SUBMITTERS }, () => submitter()));
    submittersDone = true;
    await Promise.all(readers);
    const loadSeconds = (performance.now() - started) / 1000;
    const sent = Math.min(next, batches.length);
    const completed = [...outcomes.values()].filter((outcome) => outcome === 'COMPLETED').length;

    const all = [...latencies.entity, ...latencies.search, ...latencies.updates].sort((a, b) => a - b);
    const reads = all.length;
    const ms = (value: number) => `${value.toFixed(0)} ms`;
    const byKind = (Object.keys(latencies) as ReadKind[])
      .map((kind) => {
        const sorted = [...latencies[kind]].sort((a, b) => a - b);
        return `${kind} ${sorted.length} p50 ${ms(percentile(sorted, 50))} p99 ${ms(percentile(sorted, 99))}`;
      })
      .join('; ');
    const throughputSeconds = (lastFinished - started) / 1000;
    figures.summary =
      `${sent}/${BATCHES} batches sent${sent < BATCHES ? ` (the ${WINDOW_MS / 1000} s window closed)` : ''}, ${completed} × ${PER_BATCH} entities COMPLETED in ${throughputSeconds.toFixed(1)} s = ${(completed / throughputSeconds).toFixed(2)} batches/s ` +
      `(${((completed * PER_BATCH) / throughputSeconds).toFixed(0)} entities/s); ${reads} reads (${(reads / loadSeconds).toFixed(0)}/s) ` +
      `p50 ${ms(percentile(all, 50))} p99 ${ms(percentile(all, 99))}; 5xx/no answer ${bad.length}`;
    log(figures.summary);
    log(`reads by kind: ${byKind}`);
    const perBatch = [...batchSeconds.values()].sort((a, b) => a - b);
    figures['batch POST→finished'] =
      `p50 ${percentile(perBatch, 50).toFixed(1)} s, p99 ${percentile(perBatch, 99).toFixed(1)} s, max ${(perBatch.at(-1) ?? NaN).toFixed(1)} s`;
    log(`batch POST→finished: ${figures['batch POST→finished']}`);
    // A batch far slower than the rest waited for a timeout somewhere: say which.
    const slow = [...batchSeconds].filter(([, seconds]) => seconds > 30).sort((a, b) => b[1] - a[1]);
    for (const [batchId, seconds] of slow.slice(0, 3)) {
      log(
        `slow batch ${batchId} (${seconds.toFixed(0)} s): ${describeAttempts(await context.workflows.activityAttempts(batchId))}; ${await context.workflows.diagnose(batchId)}`,
      );
    }
    if (slow.length > 0) figures['batches over 30 s'] = String(slow.length);

    check(bad.length === 0, `${bad.length} requests answered 5xx or not at all: ${bad.slice(0, 5).join(' | ')}`);
    check(unexpected.length === 0, `${unexpected.length} reads answered 4xx: ${unexpected.slice(0, 3).join(' | ')}`);
    const sentBatches = batches.slice(0, sent);
    const notCompleted = sentBatches.filter((batch) => outcomes.get(batch.batchId) !== 'COMPLETED');
    check(
      notCompleted.length === 0,
      `${notCompleted.length} batches did not complete: ${notCompleted
        .slice(0, 3)
        .map((batch) => `${batch.batchId} ${outcomes.get(batch.batchId) ?? 'no outcome'}`)
        .join(', ')}`,
    );

    const facts = await db.one<{ entities: string; revisions: string; transactions: string }>(
      `select (select count(*) from entity where entity_type = any($1)) as entities,
              (select count(*) from revision r join entity e on e.id = r.entity_id where e.entity_type = any($1)) as revisions,
              (select count(*) from transaction t where t.batch_id = any($2::uuid[])) as transactions`,
      [loadTypes, batches.map((batch) => batch.batchId)],
    );
    check(
      Number(facts.entities) === sent * PER_BATCH,
      `${facts.entities} entities of the load types, ${sent * PER_BATCH} creates were sent`,
    );
    check(Number(facts.revisions) === sent * PER_BATCH, `${facts.revisions} revisions of the load types, expected ${sent * PER_BATCH}`);
    check(Number(facts.transactions) === sent, `${facts.transactions} transactions of the load batches, expected ${sent}`);
    figures.reads = byKind;
  },
};
