import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ActivityCancellationDetails, ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogLevel, type LogMetadata } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatchActivities } from '../../activities/batches.ts';
import { sqlState } from '../../activities/sql-errors.ts';
import { createExportActivities } from '../../activities/exports.ts';
import type { BatchHeartbeat, ExportHeartbeat } from '../../temporal/contracts.ts';
import type { AttemptStanding, CheckAttempt } from '../../activities/job-control.ts';
import { inTransaction } from '../../db/sql.ts';
import { createLogger } from '../../logger.ts';
import { storeBatch } from '../../db/batches.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';

// The batch and export activities in @temporalio/testing's
// MockActivityEnvironment, on the real database: what they heartbeat, and
// what a cancel, a terminate or a lost place does to them. Temporal's answer
// to "is this attempt still wanted", and to the heartbeats, is played by the test.

/**
 * The SDK's logger, less its "Activity failed" warning: the failures here are
 * raised on purpose, and each test asserts what its activity threw (an
 * unexpected one fails the test with its error). Every other warning shows.
 */
class QuietOnActivityFailure extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (message !== 'Activity failed') super.log(level, message, meta);
  }
}

describe('job activities under MockActivityEnvironment', () => {
  const entityType = `ACT-${randomUUID()}`;
  const log = createLogger('silent', 'test');
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ worker: false });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const wanted: CheckAttempt = async () => ({ wanted: true });
  const standing =
    (value: AttemptStanding): CheckAttempt =>
    async () =>
      value;
  /**
   * Temporal on an attempt whose workflow is gone or has moved on: the check
   * says so, and the next heartbeat is answered NotFound, which the SDK turns
   * into a cancel. `seen` records when that answer came.
   */
  const gone =
    (env: MockActivityEnvironment, value: AttemptStanding, seen: string[]): CheckAttempt =>
    async () => {
      setTimeout(() => {
        seen.push('NotFound');
        env.cancel('NOT_FOUND', new ActivityCancellationDetails({ notFound: true }));
      }, 50);
      return value;
    };

  const terminated: AttemptStanding = { wanted: false, ending: 'terminated', reason: 'its workflow was terminated in Temporal' };

  /**
   * Runs the activity `of(checkAttempt)` for the workflow of `id` while
   * Temporal is `gone` with `value`: the activity ends cancelled, and only
   * once its heartbeat was answered NotFound.
   */
  async function runWhileGone<Args extends unknown[]>(
    id: string,
    value: AttemptStanding,
    of: (checkAttempt: CheckAttempt) => (...args: Args) => Promise<unknown>,
    ...args: Args
  ): Promise<void> {
    const { env } = environment(id);
    const seen: string[] = [];
    await expect(env.run(of(gone(env, value, seen)), ...args)).rejects.toBeInstanceOf(CancelledFailure);
    seen.push('ended');
    // The SDK knows the server has no use for this attempt's end, and does not report it (no "Activity not found on completion").
    expect(seen).toEqual(['NotFound', 'ended']);
  }

  /** An activity environment whose activity belongs to the workflow of `id`. */
  function environment(id: string, attempt = 1) {
    const env = new MockActivityEnvironment(
      { workflowExecution: { workflowId: id, runId: randomUUID() }, activityId: '1', attempt },
      { logger: new QuietOnActivityFailure() },
    );
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(structuredClone(details)));
    return { env, beats };
  }

  async function storedBatch(names: string[]): Promise<string> {
    const id = randomUUID();
    const body = Buffer.from(
      batchXml(
        names.map((name, index) => create(`l${index}`, name, { entityType })),
        { uuid: id },
      ),
    );
    await inTransaction(harness.db.pool, (client) =>
      storeBatch(client, {
        id,
        sha256: createHash('sha256').update(body).digest('hex'),
        apiVersion: 'v2',
        submittedBy: 'test-admin',
        force: false,
        changesTotal: names.length,
        body,
      }),
    );
    return id;
  }

  const revisionsOf = async (batchId: string) =>
    Number((await harness.sql<{ n: string }>('select count(*) as n from revision where batch_id = $1', [batchId]))[0]!.n);

  const batchActivities = (checkAttempt: CheckAttempt, afterWriteStep?: () => void | Promise<void>) =>
    createBatchActivities({ db: harness.db, log, forceKeySecret: harness.config.forceKeySecret, checkAttempt, afterWriteStep });

  it('applyBatch heartbeats its phase and progress, and commits once Temporal confirms the attempt', async () => {
    const id = await storedBatch(['Tycho Brahe']);
    const { env, beats } = environment(id);
    const checked: string[] = [];
    const activities = batchActivities(async (info) => {
      checked.push(info.workflowExecution!.workflowId);
      return { wanted: true };
    });
    expect(await env.run(activities.applyBatch, id)).toBe('COMPLETED');
    expect(beats[0]).toEqual({ phase: 'read', done: 0 } satisfies BatchHeartbeat);
    expect(beats).toContainEqual({ phase: 'write', done: 1 });
    expect(checked).toEqual([id]);
    expect(await revisionsOf(id)).toBe(1);
  });

  it('applyBatch rolls back when cancelled mid-write, and records that an operator cancelled it', async () => {
    const id = await storedBatch(['Johannes Kepler']);
    const { env } = environment(id);
    const activities = batchActivities(
      standing({ wanted: false, ending: 'cancelled', reason: 'its workflow was cancelled in Temporal' }),
      () => env.cancel(),
    );
    await expect(env.run(activities.applyBatch, id)).rejects.toBeInstanceOf(CancelledFailure);
    const batch = await harness.db.batches.find(id);
    expect(batch).toMatchObject({ status: 'FAILED', result: null });
    expect(batch?.error).toMatch(/^cancelled by an operator: .*nothing was written$/);
    expect(await revisionsOf(id)).toBe(0);
  });

  it('applyBatch does not commit when Temporal says the workflow was terminated, records why, and ends once its heartbeat is answered NotFound', async () => {
    const id = await storedBatch(['Rudolf II.']);
    await runWhileGone(id, terminated, (checkAttempt) => batchActivities(checkAttempt).applyBatch, id);
    const batch = await harness.db.batches.find(id);
    expect(batch?.status).toBe('FAILED');
    expect(batch?.error).toContain('terminated by an operator');
    expect(await revisionsOf(id)).toBe(0);
  });

  it('applyBatch steps aside without a word when another attempt or run owns the batch', async () => {
    const id = await storedBatch(['Edward Kelley']);
    await runWhileGone(
      id,
      { wanted: false, ending: 'superseded', reason: 'workflow reset' },
      (checkAttempt) => batchActivities(checkAttempt).applyBatch,
      id,
    );
    // The owner applies it; nothing was written and nothing recorded by this attempt.
    expect(await harness.db.batches.find(id)).toMatchObject({ status: 'PROCESSING', error: null });
    expect(await revisionsOf(id)).toBe(0);
    // The owner is another attempt, in an environment of its own (this one is cancelled for good).
    expect(await environment(id).env.run(batchActivities(wanted).applyBatch, id)).toBe('COMPLETED');
    expect(await revisionsOf(id)).toBe(1);
  });

  it('applyBatch records nothing when it stops for a reason Temporal cannot confirm (a worker shutting down)', async () => {
    const id = await storedBatch(['Jan Jesenius']);
    const { env } = environment(id);
    const activities = batchActivities(
      async () => {
        throw new Error('Temporal cannot be reached');
      },
      () => env.cancel('WORKER_SHUTDOWN'),
    );
    await expect(env.run(activities.applyBatch, id)).rejects.toBeInstanceOf(CancelledFailure);
    expect(await harness.db.batches.find(id)).toMatchObject({ status: 'PROCESSING', error: null });
    expect(await revisionsOf(id)).toBe(0);
  });

  it('removeExpiredBatchBodies removes the bodies of batches ended past their retention, and keeps the rows and every other body', async () => {
    const [old, recent, running] = [
      await storedBatch(['Old Body']),
      await storedBatch(['Recent Body']),
      await storedBatch(['Running Body']),
    ];
    await harness.sql(`update batch set status = 'COMPLETED', finished_at = now() - interval '40 days' where id = $1`, [old]);
    await harness.sql(`update batch set status = 'FAILED', finished_at = now() - interval '1 day' where id = $1`, [recent]);
    const activities = createBatchActivities({
      db: harness.db,
      log,
      forceKeySecret: harness.config.forceKeySecret,
      checkAttempt: wanted,
      bodyRetentionDays: 30,
    });
    expect(await new MockActivityEnvironment().run(activities.removeExpiredBatchBodies)).toBeGreaterThanOrEqual(1);
    const bodies = await harness.sql<{ batch_id: string }>('select batch_id from batch_body where batch_id = any($1)', [
      [old, recent, running],
    ]);
    expect(bodies.map((row) => row.batch_id).sort()).toEqual([recent, running].sort());
    expect(await harness.sql('select count(*)::int as n from batch where id = any($1)', [[old, recent, running]])).toEqual([{ n: 3 }]);
  });

  describe('SQL errors of an apply: deterministic ones fail for good, those of the moment are retried', () => {
    /** The error PostgreSQL raises for `statement` (a real one, from the server). */
    const raisedBy = async (statement: string): Promise<Error> => {
      const error = await harness.sql(statement).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      return error as Error;
    };
    const raise = (state: string) => `do $$ begin raise exception 'raised for the test' using errcode = '${state}'; end $$`;

    /** applyBatch whose transaction fails with `error` at its first written step, on attempt `attempt`; what it threw. */
    async function applyFailingWith(error: Error, attempt = 1): Promise<unknown> {
      const id = await storedBatch([`Error ${randomUUID()}`]);
      const { env } = environment(id, attempt);
      const thrown = await env.run(batchActivities(wanted, () => Promise.reject(error)).applyBatch, id).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(await revisionsOf(id)).toBe(0);
      return thrown;
    }
    const nonRetryable = (thrown: unknown) => thrown instanceof ApplicationFailure && thrown.nonRetryable;

    it.each([
      ['22012 division by zero', 'select 1/0'],
      ['22P02 invalid text representation', "select 'x'::int"],
      ['22001 string data right truncation', "do $$ declare short varchar(2); begin short := 'abcdef'; end $$"],
      ['23503 foreign key violation', raise('23503')],
      ['23514 check violation', raise('23514')],
      ['23502 not null violation', raise('23502')],
    ])('%s fails for good on its first attempt', async (name, statement) => {
      const error = await raisedBy(statement);
      expect(sqlState(error)).toBe(name.slice(0, 5));
      const thrown = await applyFailingWith(error);
      expect(nonRetryable(thrown)).toBe(true);
      expect((thrown as ApplicationFailure).type).toBe('DeterministicSqlError');
    });

    it.each([
      ['40001 serialization failure', raise('40001')],
      ['40P01 deadlock detected', raise('40P01')],
      ['57014 query cancelled', 'select pg_cancel_backend(pg_backend_pid()), pg_sleep(1)'],
    ])('%s is retried', async (name, statement) => {
      const error = await raisedBy(statement);
      expect(sqlState(error)).toBe(name.slice(0, 5));
      const thrown = await applyFailingWith(error);
      expect(thrown).toBe(error);
      expect(nonRetryable(thrown)).toBe(false);
    });

    it('23505 unique violation is retried once (a concurrent batch may have committed the key), then fails for good', async () => {
      const error = await raisedBy(raise('23505'));
      expect(nonRetryable(await applyFailingWith(error, 1))).toBe(false);
      expect(nonRetryable(await applyFailingWith(error, 2))).toBe(true);
    });
  });

  describe('exports', () => {
    let exportDir: string;
    let ids: number[];
    beforeAll(async () => {
      // The run's one export store: the expiry of another test file may remove files here too.
      exportDir = harness.config.exportDir;
      const id = await storedBatch(['Galileo Galilei', 'Nicolaus Copernicus', 'Giordano Bruno']);
      expect(await environment(id).env.run(batchActivities(wanted).applyBatch, id)).toBe('COMPLETED');
      const rows = await harness.sql<{ id: string }>('select id from entity where entity_type = $1 order by id', [entityType]);
      ids = rows.map((row) => Number(row.id)).slice(-3);
    });

    const exportActivities = (checkAttempt: CheckAttempt, afterExportStep?: () => void | Promise<void>) =>
      createExportActivities({ db: harness.db, log, exportDir, checkAttempt, exportRecordsPerStep: 1, afterExportStep });

    async function storedExport(): Promise<string> {
      const id = randomUUID();
      await harness.db.exports.create({
        id,
        kind: 'snapshot',
        requestedIds: ids.map(String),
        requestKey: id,
        requestedBy: 'test-exporter',
      });
      return id;
    }

    it('runExport heartbeats what the file holds, and publishes once Temporal confirms the attempt', async () => {
      const id = await storedExport();
      const { env, beats } = environment(id);
      const outcome = await env.run(exportActivities(wanted).runExport, id, 3_600_000);
      expect(outcome).toMatchObject({ status: 'COMPLETED', entitiesWritten: 3 });
      expect(beats[0]).toEqual({ phase: 'write', entitiesWritten: 0, bytes: 0 } satisfies ExportHeartbeat);
      expect(beats).toContainEqual(expect.objectContaining({ phase: 'write', entitiesWritten: 1 }));
      expect(readdirSync(exportDir)).toContain(`${id}.xml`);
    });

    it('runExport drops its partial file when cancelled mid-file, and records that an operator cancelled it', async () => {
      const id = await storedExport();
      const { env } = environment(id);
      const activities = exportActivities(
        standing({ wanted: false, ending: 'cancelled', reason: 'its workflow was cancelled in Temporal' }),
        () => env.cancel(),
      );
      await expect(env.run(activities.runExport, id, 3_600_000)).rejects.toBeInstanceOf(CancelledFailure);
      const row = await harness.db.exports.find(id);
      expect(row).toMatchObject({ status: 'FAILED', sha256: null });
      expect(row?.error).toContain('cancelled by an operator');
      expect(readdirSync(exportDir).filter((name) => name.includes(id))).toEqual([]);
    });

    it('runExport waits out a Temporal it cannot reach once its file is written, then publishes', async () => {
      const id = await storedExport();
      const { env, beats } = environment(id);
      let asked = 0;
      const unreachableTwice: CheckAttempt = async () => {
        asked += 1;
        if (asked <= 2) throw new Error(`describing workflow ${id} took longer than 15000 ms`);
        return { wanted: true };
      };
      const outcome = await env.run(exportActivities(unreachableTwice).runExport, id, 3_600_000);
      expect(outcome).toMatchObject({ status: 'COMPLETED', entitiesWritten: 3 });
      expect(asked).toBe(3);
      // It kept heartbeating while it waited (1 s and 2 s between the asks).
      expect(beats.filter((beat) => (beat as ExportHeartbeat).phase === 'publish').length).toBeGreaterThanOrEqual(2);
      expect((await harness.db.exports.find(id))?.status).toBe('COMPLETED');
    });

    it('runExport waiting for an unreachable Temporal ends when the attempt is cancelled, and records nothing it cannot confirm', async () => {
      const id = await storedExport();
      const { env } = environment(id);
      const unreachable: CheckAttempt = async () => {
        setTimeout(() => env.cancel('TIMED_OUT'), 100);
        throw new Error(`describing workflow ${id} took longer than 15000 ms`);
      };
      await expect(env.run(exportActivities(unreachable).runExport, id, 3_600_000)).rejects.toBeInstanceOf(CancelledFailure);
      // Not published, not ended: the next attempt writes the file again (or the sweep ends the export).
      expect((await harness.db.exports.find(id))?.status).toBe('RUNNING');
    });

    it('runExport removes the file it finished when Temporal says its workflow was terminated', async () => {
      const id = await storedExport();
      await runWhileGone(id, terminated, (checkAttempt) => exportActivities(checkAttempt).runExport, id, 3_600_000);
      const row = await harness.db.exports.find(id);
      expect(row?.status).toBe('FAILED');
      expect(row?.error).toContain('terminated by an operator');
      expect(readdirSync(exportDir).filter((name) => name.includes(id))).toEqual([]);
    });

    it('expireExports removes the files past their expiry and marks those exports EXPIRED, and no other', async () => {
      const [due, kept] = [await storedExport(), await storedExport()];
      mkdirSync(exportDir, { recursive: true });
      for (const [id, expiresAt] of [
        [due, new Date(Date.now() - 1000)],
        [kept, new Date(Date.now() + 3_600_000)],
      ] as const) {
        writeFileSync(join(exportDir, `${id}.xml`), '<entities/>');
        await harness.db.exports.complete(id, {
          filePath: `${id}.xml`,
          entitiesWritten: 0,
          bytes: 11,
          sha256: 'x',
          upToTransId: GENESIS_TRANSACTION_ID,
          finishedAt: new Date(),
          expiresAt,
        });
      }
      const { env } = environment('expiry');
      expect(await env.run(exportActivities(wanted).expireExports)).toBeGreaterThanOrEqual(1);
      expect((await harness.db.exports.find(due))?.status).toBe('EXPIRED');
      expect(existsSync(join(exportDir, `${due}.xml`))).toBe(false);
      expect((await harness.db.exports.find(kept))?.status).toBe('COMPLETED');
      expect(existsSync(join(exportDir, `${kept}.xml`))).toBe(true);
    });
  });
});
