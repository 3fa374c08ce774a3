// What the change feed's commit order costs, on a database of N
// generated entities loaded by the service's own write path, two chunks in
// flight at once (the load itself is the overlap that deadlocked before):
//
//  - per batch: one-entity batches applied one after another, with the
//    commit-order trigger (commit_seq drawn at COMMIT under one advisory
//    lock) and, as the baseline, with it disabled;
//  - per read: the feed's count and its first page of 50,000 after the
//    genesis transaction, selected by commit order (a join of transaction
//    to revision), against the same range selected by seq alone (the query
//    before commit order).
//
//   npm run bench:feed                  100,000 entities
//   npm run bench:feed -- --entities 20000 --batches 50

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { inTransaction } from '../db/sql.ts';
import { GENESIS_TRANSACTION_ID } from '../migrations/Migration20261123000005Genesis.ts';
import { applyBatchCommands } from '../services/batches/apply.ts';
import { applyTransaction } from '../db/apply/index.ts';
import { finishBatch, markProcessing, storeBatch } from '../db/batches.ts';
import { feedRepository } from '../db/feed.ts';
import { loadGeneratedEntities } from './lib/load.ts';
import { median, printTable, runsNote, type Figure } from './lib/report.ts';
import { dropDatabase, recreateDatabase } from './lib/stack.ts';

const PAGE = 50_000;
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

/** Milliseconds per one-entity batch, POST-less: store, apply, finish, commit, as the activity does. */
async function smallBatches(pool: pg.Pool, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < count; n += 1) {
    const batchId = randomUUID();
    const [, ms] = await timed(() =>
      inTransaction(pool, async (client) => {
        await storeBatch(client, {
          id: batchId,
          sha256: batchId,
          apiVersion: 'v2',
          submittedBy: 'bench',
          force: false,
          changesTotal: 1,
          body: Buffer.alloc(0),
        });
        await markProcessing(client, batchId);
        const result = await applyBatchCommands(
          applyTransaction(client, pool),
          [
            {
              kind: 'create',
              localId: 'a',
              entityType: 'BENCH_FEED',
              parts: [{ partUuid: randomUUID(), type: 'PT_NAME', items: [{ kind: 'string', type: 'NM_MAIN', value: `Feed ${batchId}` }] }],
            },
          ],
          {
            batchId,
            bodySha256: batchId,
            principal: 'bench',
            force: false,
            forceKeySecret: 'bench-feed-secret-0000',
            commit: true,
            sender: { id: 'bench', name: 'Bench' },
          },
        );
        await finishBatch(client, batchId, 'COMPLETED', result);
      }),
    );
    times.push(ms);
  }
  return times;
}

async function drain(stream: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of stream) n += 1;
  return n;
}

export async function feedFigures(entities: number, batches: number): Promise<Figure[]> {
  const url = await recreateDatabase('er_bench_feed');
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    const load = await loadGeneratedEntities(url, entities, { chunkSize: 10_000, concurrency: 2 });
    process.stderr.write(`loaded ${entities} entities in ${load.seconds.toFixed(1)} s, two chunks at a time (load ${loadavg()})\n`);

    await smallBatches(pool, 5);
    const withTrigger = await smallBatches(pool, batches);
    await pool.query('alter table transaction disable trigger transaction_commit_order');
    const without = await smallBatches(pool, batches);
    await pool.query('alter table transaction enable always trigger transaction_commit_order');

    const feed = feedRepository(pool, { retentionDays: 1, anchorEvery: 1000 });
    const from = (await feed.findTransaction(GENESIS_TRANSACTION_ID))!;
    const to = (await feed.latestTransaction())!;
    const counts: number[] = [];
    const countMs: number[] = [];
    const pageMs: number[] = [];
    const seqCountMs: number[] = [];
    const seqPageMs: number[] = [];
    const { rows: seqs } = await pool.query<{ max: string }>('select max(seq) as max from transaction where commit_seq is not null');
    for (let run = 0; run < 3; run += 1) {
      // A range made afresh each run (not kept), as a cold /updates/from counts it.
      const [range, ms] = await timed(() => feed.range(from, to, Number.MAX_SAFE_INTEGER));
      counts.push(range.records);
      countMs.push(ms);
      pageMs.push((await timed(() => drain(feed.streamRange(range, 0, PAGE))))[1]);
      seqCountMs.push(
        (await timed(() => pool.query('select count(distinct entity_id) from revision where seq > 0 and seq <= $1', [seqs[0]!.max])))[1],
      );
      seqPageMs.push(
        (
          await timed(() =>
            pool.query(
              `select distinct on (r.entity_id) r.entity_id, e.uuid, r.rev, r.metadata_rev from revision r join entity e on e.id = r.entity_id
                where r.seq > 0 and r.seq <= $1 order by r.entity_id, r.seq desc offset 0 limit ${PAGE}`,
              [seqs[0]!.max],
            ),
          )
        )[1],
      );
    }
    const note = `${entities.toLocaleString('en')} entities; load average ${loadavg()}`;
    return [
      {
        figure: `one-entity batch, commit order drawn at COMMIT`,
        value: median(withTrigger),
        unit: 'ms',
        baseline: median(without),
        baselineName: 'trigger off',
        target: 'within noise',
        met: true,
        info: true,
        note: `${batches} batches each; ${runsNote([median(withTrigger), median(without)], 'ms')}; ${note}`,
      },
      {
        figure: `feed count after genesis (${counts[0]!.toLocaleString('en')} records)`,
        value: median(countMs),
        unit: 'ms',
        baseline: median(seqCountMs),
        baselineName: 'by seq',
        target: 'information',
        met: true,
        info: true,
        note: `${runsNote(countMs, 'ms')}; ${note}`,
      },
      {
        figure: `feed page of ${PAGE.toLocaleString('en')} after genesis`,
        value: median(pageMs),
        unit: 'ms',
        baseline: median(seqPageMs),
        baselineName: 'by seq',
        target: 'information',
        met: true,
        info: true,
        note: `${runsNote(pageMs, 'ms')}; ${note}`,
      },
    ];
  } finally {
    await pool.end();
    await dropDatabase(url);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { entities: { type: 'string', default: '100000' }, batches: { type: 'string', default: '200' } },
  });
  const figures = await feedFigures(Number(values.entities), Number(values.batches));
  printTable(figures);
}
