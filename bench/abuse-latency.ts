// npm run bench:abuse-latency [-- --seconds 20 --records 5000 --only exports,bad-credentials --large-mb 50 --v1-mb 16 --json FILE]
//
// The latency an ordinary client sees beside each attack of the abuse suite
// (test/abuse/*.test.ts, which asserts outcomes only). One stack (both
// workers, one API process) with the limits the attacks meet at their
// defaults (config.ts; the bench stack turns some off for throughput), on a
// database of --records generated records. The ordinary client
// (bench/lib/ordinary-client.ts, a token of its own) GETs records at 20/s,
// saves a one-change batch each second (polled until COMPLETED) and follows
// the change feed each second. It runs --seconds alone (the baseline), then
// beside each attack in turn (bench/lib/attacks.ts, each attacker under its
// own principal), the attack starting 1 s before it. Between phases the
// attack is cut and the service left to finish what it accepted (batches,
// exports; the time it took is in the report). Reported per phase: the
// ordinary GETs' p50 / p95 / max, the saves' POST→COMPLETED median / max,
// the feed's p95, the ordinary client's errors (any answer but a 2xx, a
// timeout, a reset; target 0) and the attack's own outcomes by status and
// reason. The database (er_bench_abuse_latency) is loaded afresh and dropped
// after.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../config.ts';
import {
  ATTACK_NAMES,
  attackerApiKeys,
  attackerTokens,
  METRICS_TOKEN,
  prepareAttacks,
  type Attack,
  type AttackName,
} from './lib/attacks.ts';
import { commandOptions, isScript, loadAverage } from './lib/cli.ts';
import { loadGeneratedEntities } from './lib/load.ts';
import { OrdinaryClient, type OrdinarySample } from './lib/ordinary-client.ts';
import { median, printTable, type Figure } from './lib/report.ts';
import { BENCH_TOKEN, dropDatabase, recreateDatabase, startStack, type Stack } from './lib/stack.ts';
import { percentile, pollUntil, sleep } from '../test/support/poll.ts';

export interface AbuseLatencyOptions {
  records: number;
  seconds: number;
  /** The attacks to run, in this order; default all. */
  only?: readonly AttackName[];
  largeMb: number;
  v1Mb: number;
}

/** One phase: what the ordinary client saw, and how the attack's requests ended. */
interface PhaseResult {
  phase: string;
  what: string;
  gets: { count: number; p50: number; p95: number; max: number };
  savePosts: { count: number; p95: number };
  saves: { count: number; median: number; max: number };
  feeds: { count: number; p95: number; skipped: number };
  errors: Record<string, number>;
  attack: Record<string, number>;
  /** Seconds the service went on with the attack's accepted work (batches, exports) after the phase. */
  settleSeconds: number;
}

const DATABASE = 'er_bench_abuse_latency';
const ORDINARY_TOKEN = 'bench-ordinary-client-token-000000000000';
/** The attack starts this long before the ordinary client, so that it is measured at full strength. */
const HEAD_START_MS = 1000;
/** An attack still running this long after its abort is reported, and the run goes on. */
const ATTACK_STOP_MS = 10_000;
const SETTLE_LIMIT_MS = 5 * 60_000;
const WARM_UP_MS = 5000;

/** The limits the attacks meet, at their defaults: the bench stack sets them to 0 for the throughput benchmarks. */
function deployedLimits(scratch: string): Record<string, string> {
  // DATA_DIR: the configuration keeps a secret of its own there.
  const defaults = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/unused', DATA_DIR: scratch });
  const names = [
    'UPLOADS_PER_PRINCIPAL',
    'LONG_READS_PER_PRINCIPAL',
    'AUTH_FAILURE_LIMIT',
    'SUBMISSION_RATE_LIMIT',
    'EXPORT_RATE_LIMIT',
    'ANONYMOUS_READ_RATE_LIMIT',
    'OAI_ANONYMOUS_PER_ADDRESS',
    'OAI_ANONYMOUS_TOTAL',
  ] as const;
  return Object.fromEntries(names.map((name) => [name, String(defaults[name])]));
}

async function abuseLatencyRun(options: AbuseLatencyOptions): Promise<PhaseResult[]> {
  const names = options.only ?? ATTACK_NAMES;
  const url = await recreateDatabase(DATABASE);
  const scratch = mkdtempSync(join(tmpdir(), 'entity-records-abuse-latency-'));
  let stack: Stack | undefined;
  try {
    process.stderr.write(`abuse-latency: loading ${options.records} records…\n`);
    await loadGeneratedEntities(url, options.records);
    stack = await startStack(
      DATABASE,
      {
        ...deployedLimits(scratch),
        AUTH_TOKENS: JSON.stringify([
          { token: BENCH_TOKEN, name: 'bench', permissions: ['admin'] },
          { token: ORDINARY_TOKEN, name: 'ordinary-client', permissions: ['read', 'write'] },
          ...attackerTokens(),
        ]),
        API_KEYS: JSON.stringify(attackerApiKeys()),
        // The bad credentials come from one address named by X-Forwarded-For; the ordinary client's is loopback.
        TRUSTED_PROXIES: '127.0.0.1,::1',
        METRICS_TOKEN,
        // The slow harvesters are anonymous, as public harvesters are.
        OAI_PMH: 'public',
      },
      // The API logs each refusal: into the scratch directory (its tail is reported if a process exits), not this output.
      { reuseDatabase: true, childOutput: 'file' },
    );
    const apiUrl = stack.apiUrl;
    const attacks = await prepareAttacks(apiUrl, BENCH_TOKEN, names, options, scratch);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows: ids } = await db.query<{ id: string }>('select id from entity order by random() limit 1000');
      const { rows: latest } = await db.query<{ uuid: string }>(
        'select uuid from transaction where commit_seq is not null order by commit_seq desc limit 1',
      );
      const client = new OrdinaryClient(
        apiUrl,
        ORDINARY_TOKEN,
        ids.map((row) => Number(row.id)),
        latest[0]!.uuid,
      );
      // A first pass, not reported: the API's first requests of each route compile and cache what the later ones reuse.
      await client.run(Math.min(WARM_UP_MS, options.seconds * 1000));
      const results: PhaseResult[] = [];
      for (const attack of [undefined, ...attacks]) {
        const result = await phase(apiUrl, client, attack, options.seconds * 1000, db);
        process.stderr.write(
          `abuse-latency: ${result.phase}: GET p95 ${result.gets.p95.toFixed(1)} ms, save median ${result.saves.median.toFixed(0)} ms, errors ${errorCount(result)}; attack: ${counts(result.attack)}\n`,
        );
        results.push(result);
        if (stack.unexpectedExits.length > 0) throw new Error(`${stack.unexpectedExits.join('; ')}\n${stack.logTail()}`);
      }
      return results;
    } finally {
      await db.end();
    }
  } finally {
    await stack?.stop();
    await dropDatabase(url);
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One phase: the attack (none for the baseline) and the ordinary client, then the attack cut and its accepted work let finish. */
async function phase(
  apiUrl: string,
  client: OrdinaryClient,
  attack: Attack | undefined,
  durationMs: number,
  db: pg.Client,
): Promise<PhaseResult> {
  const name = attack?.name ?? 'baseline';
  process.stderr.write(`abuse-latency: ${name} for ${durationMs / 1000} s (load average ${loadAverage()})\n`);
  const outcomes = new Map<string, number>();
  const stop = new AbortController();
  const running = attack
    ? attack.run({ apiUrl, signal: stop.signal, count: (outcome) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1) })
    : Promise.resolve();
  const failed = running.catch((error: unknown) => outcomes.set(`attack failed: ${String(error).slice(0, 120)}`, 1));
  if (attack) await sleep(HEAD_START_MS);
  const cut = setTimeout(() => stop.abort(), durationMs);
  const sample = await client.run(durationMs);
  clearTimeout(cut);
  stop.abort();
  let waited: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    failed.then(() => true),
    new Promise<boolean>((resolve) => (waited = setTimeout(() => resolve(false), ATTACK_STOP_MS))),
  ]);
  clearTimeout(waited);
  if (!stopped) outcomes.set(`still running ${ATTACK_STOP_MS / 1000} s after the phase`, 1);
  const settleSeconds = await settle(db);
  return summarise(name, attack?.what ?? 'no attack', sample, outcomes, settleSeconds);
}

/** Waits (at most SETTLE_LIMIT_MS) until no batch or export is waiting or running; resolves how long that took in seconds, Infinity past the limit. */
async function settle(db: pg.Client): Promise<number> {
  const started = performance.now();
  try {
    await pollUntil(
      async () => {
        const { rows } = await db.query<{ busy: string }>(
          `select (select count(*) from batch where status in ('ACCEPTED', 'PROCESSING'))
                + (select count(*) from export_request where status in ('ACCEPTED', 'RUNNING')) as busy`,
        );
        return Number(rows[0]!.busy) === 0 ? true : undefined;
      },
      { timeoutMs: SETTLE_LIMIT_MS, intervalMs: 500, what: 'the batches and exports of the attack to end', retryErrors: false },
    );
  } catch (error) {
    if (!/^timed out/.test((error as Error).message)) throw error;
    return Number.POSITIVE_INFINITY;
  }
  return (performance.now() - started) / 1000;
}

function summarise(phase: string, what: string, sample: OrdinarySample, outcomes: Map<string, number>, settleSeconds: number): PhaseResult {
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const gets = sorted(sample.gets);
  const saves = sorted(sample.saves);
  return {
    phase,
    what,
    gets: { count: gets.length, p50: percentile(gets, 50), p95: percentile(gets, 95), max: gets.at(-1) ?? Number.NaN },
    savePosts: { count: sample.savePosts.length, p95: percentile(sorted(sample.savePosts), 95) },
    saves: { count: saves.length, median: saves.length ? median(saves) : Number.NaN, max: saves.at(-1) ?? Number.NaN },
    feeds: { count: sample.feeds.length, p95: percentile(sorted(sample.feeds), 95), skipped: sample.feedTicksSkipped },
    errors: Object.fromEntries(sample.errors),
    attack: Object.fromEntries([...outcomes].sort((a, b) => b[1] - a[1])),
    settleSeconds,
  };
}

const counts = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([what, count]) => `${what}: ${count}`)
    .join(', ') || 'none';
const errorCount = (result: PhaseResult) => Object.values(result.errors).reduce((sum, count) => sum + count, 0);

/** The whole benchmark, as bench/run.ts runs it: its figures. */
export async function abuseLatencyFigures(options: AbuseLatencyOptions): Promise<Figure[]> {
  const loadBefore = loadAverage();
  const figures = figuresOf(await abuseLatencyRun(options));
  figures[0]!.note = `${figures[0]!.note}; load average ${loadBefore} before, ${loadAverage()} after`;
  return figures;
}

/** Four figures a phase, each beside the baseline's: GET p95, save median, feed p95, and the errors (target 0) with the attack's outcomes. */
function figuresOf(results: readonly PhaseResult[]): Figure[] {
  const base = results[0]!;
  const beside = (result: PhaseResult, value: number) => (result === base ? {} : { baseline: value, baselineName: 'no attack' });
  return results.flatMap((result) => [
    {
      figure: `${result.phase}: ordinary GET p95`,
      value: result.gets.p95,
      unit: 'ms',
      ...beside(result, base.gets.p95),
      target: '-',
      met: true,
      info: true,
      note: `p50 ${result.gets.p50.toFixed(1)} ms, max ${result.gets.max.toFixed(0)} ms, ${result.gets.count} GETs`,
    },
    {
      figure: `${result.phase}: save POST→COMPLETED median`,
      value: result.saves.median,
      unit: 'ms',
      ...beside(result, base.saves.median),
      target: '-',
      met: true,
      info: true,
      note: `max ${result.saves.max.toFixed(0)} ms, ${result.saves.count} saves; POST alone p95 ${result.savePosts.p95.toFixed(0)} ms`,
    },
    {
      figure: `${result.phase}: feed p95`,
      value: result.feeds.p95,
      unit: 'ms',
      ...beside(result, base.feeds.p95),
      target: '-',
      met: true,
      info: true,
      note: `${result.feeds.count} requests${result.feeds.skipped ? `, ${result.feeds.skipped} syncs skipped (the last still running)` : ''}`,
    },
    {
      figure: `${result.phase}: ordinary client's errors`,
      value: errorCount(result),
      unit: '',
      target: '0',
      met: errorCount(result) === 0,
      note: `${counts(result.errors)}; attack: ${counts(result.attack)}; ${Number.isFinite(result.settleSeconds) ? `its accepted work ended ${result.settleSeconds.toFixed(0)} s after` : `its accepted work still running ${SETTLE_LIMIT_MS / 1000} s after`}`,
    },
  ]);
}

/** One line a phase, as docs/performance.md shows them. */
function printPhases(results: readonly PhaseResult[]): void {
  const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(value < 10 ? 1 : 0));
  process.stdout.write(
    "\n| phase | GET p50 / p95 / max (ms) | save POST→COMPLETED median / max (ms) | feed p95 (ms) | errors | the attack's requests |\n|---|---|---|---|---|---|\n",
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.phase} | ${ms(r.gets.p50)} / ${ms(r.gets.p95)} / ${ms(r.gets.max)} | ${ms(r.saves.median)} / ${ms(r.saves.max)} | ${ms(r.feeds.p95)} | ${errorCount(r)} | ${counts(r.attack)} |\n`,
    );
  process.stdout.write('\n');
  for (const r of results.slice(1)) process.stdout.write(`- ${r.phase}: ${r.what}\n`);
}

function parseAttackNames(list: string | undefined): AttackName[] | undefined {
  if (list === undefined) return undefined;
  const names = list.split(',').filter(Boolean);
  for (const name of names)
    if (!ATTACK_NAMES.includes(name as AttackName)) throw new Error(`--only: one or more of ${ATTACK_NAMES.join(', ')}; got ${name}`);
  return names as AttackName[];
}

if (isScript(import.meta)) {
  const values = commandOptions({ seconds: '20', records: '5000', 'large-mb': '50', 'v1-mb': '16' }, { optional: ['only', 'json'] });
  const options: AbuseLatencyOptions = {
    seconds: Number(values.seconds),
    records: Number(values.records.replace(/_/g, '')),
    largeMb: Number(values['large-mb']),
    v1Mb: Number(values['v1-mb']),
    ...(values.only === undefined ? {} : { only: parseAttackNames(values.only)! }),
  };
  const loadBefore = loadAverage();
  const results = await abuseLatencyRun(options);
  const loadAfter = loadAverage();
  const figures = figuresOf(results);
  printTable(figures);
  printPhases(results);
  process.stdout.write(`load average before: ${loadBefore}; after: ${loadAfter}\n`);
  if (values.json) writeFileSync(values.json, JSON.stringify({ options, loadBefore, loadAfter, phases: results, figures }, null, 2));
  if (figures.some((figure) => !figure.info && !figure.met)) process.exitCode = 1;
}
