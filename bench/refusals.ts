// Broad and odd searches, answered or refused: each search of the named set
// (bench/lib/broad-searches.ts: bare parts, values without values, one-letter
// contains, an OR of 20 prefixes, user filters, state only, …) sent to POST
// /api/v2/search and /api/v1/search, page 1 of 20, on the reads benchmark's
// database. Target: each answered (200) within 1 s, or refused (400
// SearchTooBroad, or another 4xx naming its reason) within 100 ms. A 5xx,
// a 503 SearchTimeout included, misses it. Each figure is the median of
// --runs sequential requests after one untimed pass over the whole set.
//
//   npm run bench:refusals                         1,000,000 records (the reads benchmark's database, loaded once and kept)
//   npm run bench:refusals -- --entities 2000      a small database of its own
import { BENCH_TOKEN, startStack } from './lib/stack.ts';
import { BROAD_SEARCHES, sendSearch, type ApiVersion, type SearchOutcome } from './lib/broad-searches.ts';
import { commandOptions, isScript, loadAverage, reportFigures } from './lib/cli.ts';
import { median, runsNote, type Figure } from './lib/report.ts';
import { readsDatabase, READS_ENV } from './reads.ts';

const ANSWER_WITHIN_MS = 1000;
const REFUSE_WITHIN_MS = 100;
const VERSIONS: readonly ApiVersion[] = ['v2', 'v1'];
const AUTH = { authorization: `Bearer ${BENCH_TOKEN}` };

/** The figure of one search in one version, from its timed outcomes. */
function figureOf(name: string, version: ApiVersion, outcomes: SearchOutcome[]): Figure {
  const ms = median(outcomes.map((outcome) => outcome.ms));
  const last = outcomes.at(-1)!;
  const answered = outcomes.every((outcome) => outcome.status === 200);
  const refused = outcomes.every((outcome) => outcome.status >= 400 && outcome.status < 500 && outcome.reason !== undefined);
  const outcome = answered
    ? 'answered'
    : refused
      ? `refused (${last.status} ${last.reason})`
      : `${outcomes.map((o) => `${o.status}${o.reason ? ` ${o.reason}` : ''}`).join(', ')}`;
  const met = answered ? ms <= ANSWER_WITHIN_MS : refused ? ms <= REFUSE_WITHIN_MS : false;
  return {
    figure: `${version} search: ${name}`,
    value: ms,
    unit: 'ms',
    target: `answered ≤ ${ANSWER_WITHIN_MS} ms or refused ≤ ${REFUSE_WITHIN_MS} ms`,
    met,
    note: `${outcome}; ${runsNote(
      outcomes.map((o) => o.ms),
      'ms',
    )}`,
  };
}

export async function refusalFigures(entities: number, runs = 3): Promise<Figure[]> {
  const database = await readsDatabase(entities);
  const stack = await startStack(database.name, READS_ENV, { reuseDatabase: true });
  try {
    for (const version of VERSIONS) for (const search of BROAD_SEARCHES) await sendSearch(stack.apiUrl, version, search, AUTH);
    const figures: Figure[] = [];
    for (const version of VERSIONS) {
      for (const search of BROAD_SEARCHES) {
        const outcomes: SearchOutcome[] = [];
        for (let run = 0; run < runs; run += 1) outcomes.push(await sendSearch(stack.apiUrl, version, search, AUTH));
        figures.push(figureOf(search.name, version, outcomes));
      }
    }
    const first = figures[0];
    if (first) first.note = `${first.note}; ${database.how}; load average ${loadAverage()}`;
    return figures;
  } finally {
    await stack.stop();
  }
}

if (isScript(import.meta)) {
  const values = commandOptions({ entities: '1000000', runs: '3' }, { optional: ['json'] });
  await reportFigures(values.json, () => refusalFigures(Number(values.entities.replace(/_/g, '')), Number(values.runs)));
}
