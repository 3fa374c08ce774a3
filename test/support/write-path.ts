// Applies commands through the batch write path's own plan (PlanWriter's COPY) in one transaction, as a worker
// applies a batch, without the API or Temporal: for tests that need many records fast.
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { applyTransaction } from '../../db/apply/index.ts';
import { finishBatch, markProcessing, storeBatch } from '../../db/batches.ts';
import { inTransaction } from '../../db/sql.ts';
import type { CreateEntityCommand } from '../../domain/model.ts';
import { applyBatchCommands } from '../../services/batches/apply.ts';
import type { Harness } from './harness.ts';

/** The batch's sender: the records' search_user rows name it. */
export interface Sender {
  id: string;
  name: string;
  uuid: string;
}

/** Stores a batch of `commands` and applies it COMPLETED; fails the calling test unless every command succeeds. */
export async function applyThroughWritePath(harness: Harness, commands: CreateEntityCommand[], sender: Sender): Promise<void> {
  const batchId = randomUUID();
  const sha256 = randomUUID().replace(/-/g, '').repeat(2);
  await inTransaction(harness.db.pool, async (client) => {
    await storeBatch(client, {
      id: batchId,
      sha256,
      apiVersion: 'v2',
      submittedBy: 'test',
      force: false,
      changesTotal: commands.length,
      body: Buffer.alloc(0),
    });
    await markProcessing(client, batchId);
    const outcome = await applyBatchCommands(applyTransaction(client, harness.db.pool), commands, {
      batchId,
      bodySha256: sha256,
      sender,
      principal: 'test',
      force: false,
      forceKeySecret: 'write-path-test-force-key-secret-0000000',
      commit: true,
    });
    expect(outcome.outcome, JSON.stringify(outcome).slice(0, 2000)).toBe('success');
    await finishBatch(client, batchId, 'COMPLETED', outcome);
  });
}
