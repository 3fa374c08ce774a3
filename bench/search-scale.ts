// The real client's name searches (bench/lib/broad-searches.ts NAME_SEARCHES)
// at a given registry size: for each, the page (1 of 20) and the exact total
// timed apart, as the service runs them (db/search/compile.ts, one read-only
// transaction each, no JIT), p50 and p95 of --runs after one untimed pass.
// Targets at 3,000,000 records: page ≤ 100 ms, total ≤ 1 s for up to
// 250,000 matches. With --no-statistics the large tables' statistics are
// removed first, as a fresh load leaves them (the plans must not change).
//
//   npm run bench:search-scale -- --entities 3000000
//   npm run bench:search-scale -- --entities 2000 --runs 3     smoke size
//   npm run bench:search-scale -- --database er_bench_scale_3000000 --no-statistics
//     (a database kept by bench:scale --keep or --load-only, measured as it is)
import pg from 'pg';
import { compileSearch } from '../db/search/compile.ts';
import { wordsHeldWhole } from '../db/search/words-held-whole.ts';
import { migrate, openOrm } from '../db/orm.ts';
import { NAME_SEARCHES } from './lib/broad-searches.ts';
import { commandOptions, isScript, loadAverage, reportFigures } from './lib/cli.ts';
import type { Figure } from './lib/report.ts';
import { readsDatabase } from './reads.ts';
import { statementPages } from './lib/statement-pages.ts';
import { openDatabase } from './lib/stack.ts';

const PAGE_WITHIN_MS = 100;
const TOTAL_WITHIN_MS = 1000;
/** The service's default SEARCH_MAX_MATCHES. */
const MAX_MATCHES = 1_000_000;
const STATISTICS_TABLES = ['entity', 'search_value', 'name_word', 'name_vocabulary'];

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function timed(
  client: pg.Client,
  statement: { text: string; values: unknown[] },
): Promise<{ ms: number; rows: pg.QueryResultRow[] }> {
  await client.query('begin transaction isolation level repeatable read read only; set local jit = off');
  try {
    const started = performance.now();
    const { rows } = await client.query(statement);
    return { ms: performance.now() - started, rows };
  } finally {
    await client.query('rollback');
  }
}

export async function searchScaleFigures(entities: number, runs: number, withoutStatistics: boolean, kept?: string): Promise<Figure[]> {
  const database = kept ? { url: await openDatabase(kept), how: `the kept database ${kept}` } : await readsDatabase(entities);
  const orm = await openOrm(database.url);
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
  const figures = await measureSearches(database.url, runs, withoutStatistics);
  const first = figures[0];
  if (first)
    first.note = `${first.note}; ${database.how}; ${withoutStatistics ? 'without statistics' : 'with statistics'}; load average ${loadAverage()}`;
  return figures;
}

/**
 * The search set on the database of bench:scale (bench/scale.ts), which its
 * growth exponents judge: a page stays flat with the registry's size; a
 * total grows with the matches, which grow with the registry.
 */
export async function searchFiguresForScale(databaseUrl: string, runs = 3): Promise<(Figure & { growth: 'flat' | 'linear' })[]> {
  const figures = await measureSearches(databaseUrl, runs, false);
  return figures.map((figure) => ({ ...figure, growth: figure.figure.startsWith('search page') ? 'flat' : 'linear' }));
}

/** Page and total of every search of NAME_SEARCHES on `databaseUrl`, timed apart, `runs` times after one untimed pass. */
async function measureSearches(databaseUrl: string, runs: number, withoutStatistics: boolean): Promise<Figure[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    if (withoutStatistics)
      await client.query(
        `delete from pg_statistic where starelid = any(array[${STATISTICS_TABLES.map((table) => `'${table}'::regclass`).join(', ')}])`,
      );
    const figures: Figure[] = [];
    for (const search of NAME_SEARCHES) {
      const page: number[] = [];
      const total: number[] = [];
      let count = 0;
      let pageStatement = { text: '', values: [] as unknown[] };
      for (let run = 0; run <= runs; run += 1) {
        // A FULLTEXT page costs its words' probe of name_vocabulary too, as the service runs it (db/search/repository.ts).
        const started = performance.now();
        const heldWhole = search.searchType === 'FULLTEXT' ? await wordsHeldWhole(client, search.query.text ?? '') : undefined;
        const wordsMs = performance.now() - started;
        const compiled = compileSearch(search.query, { page: 1, pageSize: 20 }, search.searchType, MAX_MATCHES, heldWhole);
        pageStatement = compiled.page;
        const pageRun = await timed(client, compiled.page);
        const totalRun = await timed(client, compiled.count);
        count = Number(totalRun.rows[0]?.total ?? 0);
        // The first pass warms the cache and is not counted.
        if (run === 0) continue;
        page.push(wordsMs + pageRun.ms);
        total.push(totalRun.ms);
      }
      const note = `${count.toLocaleString('en')} matches; p50 page ${percentile(page, 50).toFixed(1)} ms, total ${percentile(total, 50).toFixed(1)} ms`;
      // What the page reads, after the timed runs: the same pages at every size, if it costs what it answers.
      const read = await statementPages(client, pageStatement);
      figures.push(
        {
          figure: `search page p95: ${search.name}`,
          value: percentile(page, 95),
          unit: 'ms',
          target: `≤ ${PAGE_WITHIN_MS} ms`,
          met: percentile(page, 95) <= PAGE_WITHIN_MS,
          note,
        },
        {
          figure: `search page reads: ${search.name}`,
          value: read.pages,
          unit: 'pages',
          target: 'reported',
          met: true,
          info: true,
          note: `${read.readIn.toLocaleString('en')} of them read into PostgreSQL's buffers`,
        },
        {
          figure: `search total p95: ${search.name}`,
          value: percentile(total, 95),
          unit: 'ms',
          target: `≤ ${TOTAL_WITHIN_MS} ms up to 250,000 matches`,
          met: count > 250_000 || percentile(total, 95) <= TOTAL_WITHIN_MS,
          note,
        },
      );
    }
    return figures;
  } finally {
    await client.end();
  }
}

if (isScript(import.meta)) {
  const values = commandOptions({ entities: '3000000', runs: '10' }, { optional: ['json', 'database'], flags: ['no-statistics'] });
  await reportFigures(values.json, () =>
    searchScaleFigures(Number(values.entities.replace(/_/g, '')), Number(values.runs), values['no-statistics'], values.database),
  );
}
