import type { Orm } from '../db/orm.ts';
import type { Logger } from 'pino';

export interface BatchActivityDeps {
  orm: Orm;
  log: Logger;
}

export type BatchOutcomeStatus = 'COMPLETED' | 'FAILED';

export function createBatchActivities(deps: BatchActivityDeps) {
  return {
    async applyBatch(batchId: string): Promise<BatchOutcomeStatus> {
      const connection = deps.orm.em.getConnection();
      await connection.execute(`update batch set status = 'PROCESSING' where id = ? and status = 'ACCEPTED'`, [batchId]);
      await connection.execute(
        `update batch set status = 'COMPLETED', finished_at = now() where id = ? and status = 'PROCESSING'`,
        [batchId],
      );
      deps.log.info({ batchId }, 'batch applied');
      return 'COMPLETED';
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
