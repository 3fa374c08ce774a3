import { ApplicationFailure, Context } from '@temporalio/activity';
import { pgPool, type Orm } from '../db/orm.ts';
import { inTransaction } from '../db/sql.ts';
import { DomainError } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import { applyBatch, xmlCommandSource } from '../services/batches/apply.ts';
import { findBatch, finishBatch, markProcessing, readBatchBody, recordProgress } from '../services/batches/store.ts';

export interface BatchActivityDeps {
  orm: Orm;
  log: Logger;
  forceKeySecret: string;
  /** Test seam: called after each written step, inside the open transaction (a throw there aborts it). */
  afterWriteStep?: (batchId: string, done: number, attempt: number) => void;
}

export type BatchOutcomeStatus = 'COMPLETED' | 'FAILED';

export function createBatchActivities(deps: BatchActivityDeps) {
  return {
    /**
     * Applies a stored batch in one PostgreSQL transaction. At-least-once safe:
     * the outcome is committed together with the writes, so a retry after a
     * crash finds the batch finished and returns its status.
     */
    async applyBatch(batchId: string): Promise<BatchOutcomeStatus> {
      const pool = await pgPool(deps.orm);
      const batch = await findBatch(pool, batchId);
      if (!batch) throw ApplicationFailure.nonRetryable(`batch ${batchId} is not stored`, 'BatchNotFound');
      if (batch.status === 'COMPLETED' || batch.status === 'FAILED') return batch.status;
      await markProcessing(pool, batchId);

      const started = performance.now();
      const total = batch.changesTotal ?? 0;
      const attempt = Context.current().info.attempt;
      let applied;
      try {
        applied = await inTransaction(pool, async (client) => {
          const outcome = await applyBatch(client, xmlCommandSource(() => readBatchBody(pool, batchId)), {
            batchId,
            bodySha256: batch.bodySha256,
            principal: batch.submittedBy,
            force: batch.force,
            offeredForceKey: batch.offeredForceKey ?? undefined,
            forceKeySecret: deps.forceKeySecret,
            commit: true,
            onProgress: async (done, phase) => {
              Context.current().heartbeat({ phase, done });
              if (phase !== 'write') return;
              deps.afterWriteStep?.(batchId, done, attempt);
              await recordProgress(pool, batchId, Math.floor(done * total));
            },
          });
          await finishBatch(client, batchId, outcome.result.outcome === 'success' ? 'COMPLETED' : 'FAILED', outcome.result);
          return outcome;
        });
      } catch (error) {
        // The API validated this body; a body that no longer reads is not worth retrying.
        if (error instanceof DomainError) throw ApplicationFailure.nonRetryable(error.message, error.code);
        throw error;
      }
      const result = applied.result;
      const status = result.outcome === 'success' ? 'COMPLETED' : 'FAILED';
      deps.log.info(
        { batchId, status, changes: applied.changes, applyMs: Math.round(performance.now() - started) },
        'batch finished',
      );
      return status;
    },

    /** Records a batch as FAILED when applying it failed for good (not on a rule: those are results). */
    async markBatchFailed(batchId: string, reason: string): Promise<void> {
      const pool = await pgPool(deps.orm);
      const batch = await findBatch(pool, batchId);
      if (!batch || batch.status === 'COMPLETED' || batch.status === 'FAILED') return;
      await finishBatch(pool, batchId, 'FAILED', null, reason);
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
