import type { BatchActivities, BatchHeartbeat, BatchOutcomeStatus } from '../temporal/contracts.ts';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { BATCH_WRITTEN_TABLES } from '../db/analyze.ts';
import type { Db } from '../db/index.ts';
import { DomainError } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import { applyBatch, xmlCommandSource } from '../services/batches/apply.ts';
import { ApplyTimeline } from '../services/batches/apply-timeline.ts';
import { deterministicSqlFailure, isDeterministicSqlError } from './sql-errors.ts';
import {
  awaitHeartbeatVerdict,
  confirmStillWanted,
  keepHeartbeating,
  throwIfStopped,
  whyStopped,
  type CheckAttempt,
} from './job-control.ts';

export interface BatchActivityDeps {
  db: Db;
  log: Logger;
  forceKeySecret: string;
  /** Asks Temporal whether an attempt may still commit (job-control.ts). */
  checkAttempt: CheckAttempt;
  /** How long a batch's body is kept after the batch ended (BATCH_BODY_RETENTION_DAYS). */
  bodyRetentionDays?: number;
  /** A batch that wrote at least this many records is followed by ANALYZE of the tables it wrote (ANALYZE_AFTER_RECORDS); 0: never. */
  analyzeAfterRecords?: number;
  /** Test seam: called after each written step, inside the open transaction (a throw there aborts it; a promise holds the step). */
  afterWriteStep?: (batchId: string, done: number, attempt: number) => void | Promise<void>;
}

const DEFAULT_BODY_RETENTION_DAYS = 30;
const DEFAULT_ANALYZE_AFTER_RECORDS = 10_000;
/** One table's ANALYZE samples a fixed number of rows: seconds even on millions; past this something is wrong. */
const ANALYZE_STATEMENT_TIMEOUT_MS = 5 * 60_000;
const BODIES_PER_STEP = 200;

export function createBatchActivities(deps: BatchActivityDeps): BatchActivities {
  return {
    /**
     * Applies a stored batch in one PostgreSQL transaction. At-least-once safe:
     * the outcome is committed together with the writes, so a retry after a
     * crash finds the batch finished and returns its status. Cancelled or
     * terminated in Temporal, it rolls back and records why; it commits only
     * after Temporal has confirmed that this attempt is still wanted.
     */
    async applyBatch(batchId: string): Promise<BatchOutcomeStatus> {
      const context = Context.current();
      const timeline = ApplyTimeline.start(batchId);
      timeline?.mark('activityStart');
      const batches = deps.db.batches;
      const batch = await batches.findState(batchId);
      if (!batch) throw ApplicationFailure.nonRetryable(`batch ${batchId} is not stored`, 'BatchNotFound');
      // The detail's attempt once the workflow is gone: Temporal's count, kept on the row.
      await batches.recordActivityAttempt(batchId, context.info.attempt);
      if (batch.status === 'COMPLETED' || batch.status === 'FAILED') return batch.status;
      await batches.markProcessing(batchId);
      timeline?.mark('findState+attempt+markProcessing');

      const progress: BatchHeartbeat = { phase: 'read', done: 0 };
      const heartbeat = keepHeartbeating(context, () => progress);
      const started = performance.now();
      const total = batch.changesTotal ?? 0;
      const attempt = context.info.attempt;
      try {
        const applied = await deps.db.revisions.committed(async (transaction) => {
          if (timeline !== undefined) timeline.watchBackend(await transaction.backendPid());
          timeline?.mark('begin');
          const outcome = await applyBatch(
            transaction,
            xmlCommandSource(() => batches.readBody(batchId)),
            {
              batchId,
              bodySha256: batch.bodySha256,
              principal: batch.submittedBy,
              force: batch.force,
              offeredForceKey: batch.offeredForceKey ?? undefined,
              forceKeySecret: deps.forceKeySecret,
              commit: true,
              timeline,
              signal: context.cancellationSignal,
              onProgress: async (done, phase) => {
                progress.phase = phase;
                progress.done = done;
                heartbeat.now();
                if (phase === 'write') await deps.afterWriteStep?.(batchId, done, attempt);
                throwIfStopped(context);
                if (phase === 'write') await batches.recordProgress(batchId, Math.floor(done * total));
              },
            },
          );
          progress.phase = 'commit';
          const succeeded = outcome.outcome === 'success';
          if (!(await transaction.finishBatch(batchId, succeeded ? 'COMPLETED' : 'FAILED', outcome))) {
            throw ApplicationFailure.nonRetryable(
              `batch ${batchId} was ended meanwhile (its workflow was stopped); nothing was written`,
              'BatchEnded',
            );
          }
          timeline?.mark('finishBatch');
          // The last word before the commit: a terminated or superseded attempt must not write. Asked once, not
          // patiently as an export does: the transaction is open and keeps the rows it wrote locked meanwhile.
          await confirmStillWanted(context, deps.checkAttempt);
          timeline?.mark('confirmStillWanted');
          return outcome;
        });
        timeline?.mark('commit');
        const status = applied.outcome === 'success' ? 'COMPLETED' : 'FAILED';
        deps.log.info({ batchId, status, changes: applied.changes, applyMs: Math.round(performance.now() - started) }, 'batch finished');
        if (applied.outcome === 'success') await analyzeIfLarge(batchId, applied.revisions);
        return status;
      } catch (error) {
        // The API validated this body; a body that no longer reads is not worth retrying.
        if (error instanceof DomainError) throw ApplicationFailure.nonRetryable(error.message, error.code);
        if (isDeterministicSqlError(error, attempt) && !context.cancellationSignal.aborted)
          throw deterministicSqlFailure(error, `batch ${batchId} cannot be applied`);
        throw await recordStop(batchId, context, error);
      } finally {
        heartbeat.stop();
      }
    },

    /** Records a batch as FAILED when applying it failed for good (not on a rule: those are results). */
    async markBatchFailed(batchId: string, reason: string): Promise<void> {
      await deps.db.batches.fail(batchId, reason);
    },

    /** Housekeeping, run by the expiry workflow: bodies of batches ended past their retention go, a few hundred at a time. */
    async removeExpiredBatchBodies(): Promise<number> {
      const days = deps.bodyRetentionDays ?? DEFAULT_BODY_RETENTION_DAYS;
      let removed = 0;
      for (;;) {
        const step = await deps.db.batches.removeEndedBodies(days, BODIES_PER_STEP);
        removed += step;
        if (step < BODIES_PER_STEP) break;
        Context.current().heartbeat(removed);
      }
      if (removed > 0) deps.log.info({ removed, retentionDays: days }, 'removed the bodies of batches ended past their retention');
      return removed;
    },
  };

  /**
   * After a batch committed: its tables analyzed when it wrote many records,
   * so the next reads are planned on statistics that know of them. The batch
   * is COMPLETED already (readers see it); a failure here is logged, never
   * the batch's.
   */
  async function analyzeIfLarge(batchId: string, records: number): Promise<void> {
    const threshold = deps.analyzeAfterRecords ?? DEFAULT_ANALYZE_AFTER_RECORDS;
    if (threshold === 0 || records < threshold) return;
    const started = performance.now();
    try {
      const { analyzed, skipped } = await deps.db.analyzer.analyze(BATCH_WRITTEN_TABLES, ANALYZE_STATEMENT_TIMEOUT_MS);
      deps.log.info(
        { batchId, records, analyzed, skipped, analyzeMs: Math.round(performance.now() - started) },
        'tables analyzed after a large batch',
      );
    } catch (error) {
      deps.log.warn({ batchId, records, err: error }, 'ANALYZE after a large batch failed; the statistics wait for autovacuum');
    }
  }

  /**
   * After the transaction rolled back on `error`: a batch stopped by an
   * operator is recorded FAILED with the reason (its workflow may be gone and
   * unable to do it); a superseded attempt records nothing. Returns what the
   * activity throws.
   */
  async function recordStop(batchId: string, context: Context, error: unknown): Promise<unknown> {
    const stopped = await whyStopped(context, error, deps.checkAttempt);
    if (!stopped) return error;
    deps.log.warn(
      { batchId, ending: stopped.ending, reason: stopped.reason, attempt: context.info.attempt },
      'batch apply stopped; nothing was written',
    );
    if (stopped.ending !== 'superseded') {
      await deps.db.batches.fail(batchId, `${stoppedMessage(stopped.ending)}: ${stopped.reason}; nothing was written`);
    }
    // Seen by the check before its heartbeat answer: wait for that answer, so that the attempt ends the way Temporal expects.
    await awaitHeartbeatVerdict(context);
    return error;
  }
}

function stoppedMessage(ending: 'cancelled' | 'terminated' | 'closed'): string {
  return { cancelled: 'cancelled by an operator', terminated: 'terminated by an operator', closed: 'stopped' }[ending];
}
