import pg from 'pg';
import { feedRepository } from './db/feed.ts';
const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/er_bench_reads', max: 4 });
const feed = feedRepository(pool, { retentionDays: 1, anchorEvery: 1000 });
await pool.query('delete from feed_range');
const from = (await feed.findTransaction('91812cb8-3519-4f78-b0ec-df6e951e2c7c'))!;
const to = (await feed.latestTransaction())!;
let t = performance.now();
const range = await feed.range(from, to, 0);
console.log('layout', range.records, range.layout.revisions, range.layout.gapSeqs?.length, (performance.now() - t).toFixed(0), 'ms');
for (const [page, size] of [[1, 1000], [2, 1000], [500, 1000], [999, 1000], [1, 50000], [10, 50000]]) {
  t = performance.now();
  let n = 0;
  for await (const _ of feed.streamRange(range, (page - 1) * size, size)) n += 1;
  console.log(`page ${page} of ${size}: ${n} rows ${(performance.now() - t).toFixed(1)} ms`);
}
t = performance.now();
const again = await feed.range(from, to, 0);
console.log('kept lookup', (performance.now() - t).toFixed(1), 'ms', again.records);
await pool.end();
