import autocannon from 'autocannon';
import { BENCH_TOKEN, startStack } from '../bench/lib/stack.ts';
const stack = await startStack('er_bench_reads', process.env.PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROF}` } : {}, { reuseDatabase: true });
const ids = Array.from({ length: 5000 }, (_, i) => 1 + ((i * 7919) % 999_000));
let i = 0;
const run = (duration: number) => new Promise<autocannon.Result>((resolve, reject) => {
  autocannon({ url: stack.apiUrl, connections: 32, duration, headers: { authorization: `Bearer ${BENCH_TOKEN}` },
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v2/entities/${ids[i++ % ids.length]}` }) }] }, (err, res) => (err ? reject(err) : resolve(res)));
});
await run(2);
const r = await run(10);
console.log(r.requests.average, 'req/s', r.latency.p50, 'ms p50', r.non2xx, 'non2xx');
await stack.stop();
