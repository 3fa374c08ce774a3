// One scenario = one fresh stack (Temporal dev server, scratch database,
// worker and API as child processes), a fault, and assertions on the
// database and the files. Whatever happens, the processes and the database
// are gone afterwards.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, startStack, type Stack } from '../../../bench/lib/stack.ts';
import { ServiceClient } from './client.ts';
import { Inspector } from './db.ts';
import { GiveUp, pollUntil } from '../../support/poll.ts';
import { WorkflowInspector } from './workflows.ts';

export interface ScenarioContext {
  stack: Stack;
  client: ServiceClient;
  db: Inspector;
  /** A scratch directory for generated batches and downloaded files. */
  work: string;
  /** A short random tag for entity types of this run. */
  tag: string;
  log(line: string): void;
  /** What Temporal knows about the workflows (a batch's or an export's id is its workflow id). */
  workflows: WorkflowInspector;
  /** Figures worth printing in the summary. */
  figures: Record<string, string>;
}

export interface Scenario {
  name: string;
  title: string;
  /** The whole scenario, stack start-up included, must end within this. */
  timeoutMs: number;
  /** Extra environment of the worker and the API. */
  env?: Record<string, string>;
  /** Made before the stack (a PostgreSQL server of the scenario's own): the stack's database server and environment. */
  prepare?(databaseName: string): Promise<Prepared>;
  run(context: ScenarioContext): Promise<void>;
}

interface Prepared {
  /** A URL of the server's `postgres` database: the stack's database is made there. */
  databaseServer?: string;
  env: Record<string, string>;
  /** After the stack has stopped. */
  cleanup(): Promise<void>;
}

export interface ScenarioOutcome {
  name: string;
  passed: boolean;
  seconds: number;
  error?: string;
  figures: Record<string, string>;
}

/** Cleanups of the scenario in progress, run by the signal handler of the runner. */
export const activeCleanups = new Set<() => Promise<void>>();

/** A failed check; inside a pollUntil probe it stops the polling at once. */
class AssertionFailed extends GiveUp {}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailed(message);
}

/** The job ended before the scenario could inject its fault: too small for this machine. */
export class EndedTooSoon extends GiveUp {}

/** A job as the fault suite watches it: its row, and what its row says while it writes. */
interface WatchedJob<Progress extends string, Row extends { status: string } & Record<Progress, number>> {
  kind: 'batch' | 'export';
  row(): Promise<Row | undefined>;
  /** The status of a job under way. */
  running: string;
  /** The row's count of work written so far. */
  progress: Progress;
  intervalMs: number;
}

/**
 * Polls until the job is under way with work written, the moment a scenario
 * injects its fault (`fault` says which, for the message); EndedTooSoon when
 * the job ended first.
 */
function jobWriting<Progress extends string, Row extends { status: string } & Record<Progress, number>>(
  job: WatchedJob<Progress, Row>,
  fault: string,
  timeoutMs: number,
): Promise<Row> {
  return pollUntil(
    async () => {
      const row = await job.row();
      if (row?.status === 'COMPLETED' || row?.status === 'FAILED')
        throw new EndedTooSoon(`the ${job.kind} finished (${row.status}) before ${fault}`);
      return row?.status === job.running && row[job.progress] > 0 ? row : undefined;
    },
    { timeoutMs, intervalMs: job.intervalMs, what: `the ${job.kind} to be ${job.running} with ${job.progress} > 0` },
  );
}

/** The batch PROCESSING with changes applied: see jobWriting. */
export function batchWriting(db: Inspector, batchId: string, fault: string, timeoutMs: number) {
  return jobWriting(
    { kind: 'batch', row: () => db.batch(batchId), running: 'PROCESSING', progress: 'changesApplied', intervalMs: 50 },
    fault,
    timeoutMs,
  );
}

/** The export RUNNING with entities written: see jobWriting. */
export function exportWriting(db: Inspector, exportId: string, fault: string, timeoutMs: number) {
  return jobWriting(
    { kind: 'export', row: () => db.exportRow(exportId), running: 'RUNNING', progress: 'entitiesWritten', intervalMs: 20 },
    fault,
    timeoutMs,
  );
}

/** How many times larger than its base size a scenario's jobs may grow. */
const MAX_SCALE = 4;

/**
 * Runs a scenario with its jobs at their base size (scale 1), and while a job
 * ended before its fault was injected (EndedTooSoon), again with jobs twice
 * as large, up to MAX_SCALE: on a fast machine the job grows until the fault
 * lands inside it, rather than the scenario passing without its fault.
 */
async function withJobsBigEnough(context: Pick<ScenarioContext, 'log' | 'figures'>, run: (scale: number) => Promise<void>): Promise<void> {
  for (let scale = 1; ; scale *= 2) {
    try {
      await run(scale);
      return;
    } catch (error) {
      if (!(error instanceof EndedTooSoon) || scale * 2 > MAX_SCALE) throw error;
      context.log(`${error.message}: again with jobs ${scale * 2}× as large`);
      context.figures['jobs scaled'] = `${scale * 2}×`;
    }
  }
}

/** A scenario whose jobs grow until its fault lands inside them: `runAtScale` runs under withJobsBigEnough. */
export function scalingScenario(
  definition: Omit<Scenario, 'run'>,
  runAtScale: (context: ScenarioContext, scale: number) => Promise<void>,
): Scenario {
  return { ...definition, run: (context) => withJobsBigEnough(context, (scale) => runAtScale(context, scale)) };
}

export async function runScenario(scenario: Scenario, index: number): Promise<ScenarioOutcome> {
  const started = performance.now();
  const tag = randomBytes(3).toString('hex');
  const databaseName = `er_faults_${process.pid}_${index}_${tag}`;
  const work = mkdtempSync(join(tmpdir(), `entity-records-faults-${scenario.name}-`));
  const figures: Record<string, string> = {};
  const elapsed = () => ((performance.now() - started) / 1000).toFixed(1);
  const log = (line: string) => process.stdout.write(`  [${scenario.name} ${elapsed()}s] ${line}\n`);

  let stack: Stack | undefined;
  let db: Inspector | undefined;
  let workflows: WorkflowInspector | undefined;
  let prepared: Prepared | undefined;
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    await db?.close();
    await workflows?.close();
    // FAULTS_LOG_DIR keeps the children's logs of every scenario for a closer look.
    const logDir = process.env.FAULTS_LOG_DIR;
    if (stack && logDir) {
      for (const name of ['worker.log', 'worker-2.log', 'api.log', 'api-2.log', 'temporal.log']) {
        try {
          cpSync(join(stack.scratch, name), join(logDir, `${scenario.name}-${name}`));
        } catch {
          // that child never wrote a line
        }
      }
    }
    await stack?.stop().catch((error: unknown) => log(`stopping the stack failed: ${String(error)}`));
    if (stack) await dropDatabase(stack.databaseUrl).catch((error: unknown) => log(`dropping ${databaseName} failed: ${String(error)}`));
    await prepared?.cleanup().catch((error: unknown) => log(`cleaning up what the scenario prepared failed: ${String(error)}`));
    rmSync(work, { recursive: true, force: true });
  };
  activeCleanups.add(cleanup);

  let timer: NodeJS.Timeout | undefined;
  try {
    const body = async () => {
      const logLevel: Record<string, string> = process.env.FAULTS_LOG_LEVEL ? { LOG_LEVEL: process.env.FAULTS_LOG_LEVEL } : {};
      prepared = await scenario.prepare?.(databaseName);
      stack = await startStack(
        databaseName,
        { ...logLevel, ...scenario.env, ...prepared?.env },
        { childOutput: 'file', ...(prepared?.databaseServer ? { databaseServer: prepared.databaseServer } : {}) },
      );
      log(`stack up: API ${stack.apiUrl}, Temporal ${stack.temporalAddress}, database ${databaseName}`);
      db = await Inspector.connect(stack.databaseUrl);
      workflows = new WorkflowInspector(stack.temporalAddress);
      const context: ScenarioContext = {
        stack,
        client: new ServiceClient(stack),
        db,
        work,
        tag,
        log,
        figures,
        workflows,
      };
      await scenario.run(context);
      check(stack.unexpectedExits.length === 0, `a process crashed: ${stack.unexpectedExits.join('; ')}`);
    };
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`scenario did not finish within ${scenario.timeoutMs / 1000} s`)), scenario.timeoutMs);
    });
    const running = body();
    // After a timeout the body may still fail while the stack is torn down: that is no news.
    running.catch(() => undefined);
    await Promise.race([running, deadline]);
    return { name: scenario.name, passed: true, seconds: (performance.now() - started) / 1000, figures };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`FAILED: ${message}`);
    if (!(error instanceof AssertionFailed) && error instanceof Error && error.stack) process.stdout.write(`${error.stack}\n`);
    const tail = (stack as Stack | undefined)?.logTail(30);
    if (tail) process.stdout.write(`${tail.replace(/^/gm, '    | ')}\n`);
    return { name: scenario.name, passed: false, seconds: (performance.now() - started) / 1000, error: message, figures };
  } finally {
    clearTimeout(timer);
    await cleanup();
    activeCleanups.delete(cleanup);
  }
}
