import pg from '/work/main/node_modules/pg/lib/index.js';
import { compileSearch } from '/work/main/services/search/compile.ts';
const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/er_bench_reads' });
const q = JSON.parse(process.argv[2]!);
const c = compileSearch(q, { page: 0, pageSize: 20 }, 'DEFAULT');
for (const which of ['page', 'count'] as const) {
  const { rows } = await pool.query(`explain (analyze, buffers) ${c[which].text}`, c[which].values);
  console.log(`--- ${which}\n` + rows.map((r) => r['QUERY PLAN']).join('\n'));
}
await pool.end();
