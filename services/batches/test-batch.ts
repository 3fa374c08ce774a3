import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { BatchResult, ChangeCommand, XmlVersion } from '../../domain/model.ts';
import { readBatch } from '../../domain/xml/batch-reader.ts';
import { randomUUID } from 'node:crypto';
import { applyBatchCommands } from './apply.ts';
import { bodySource, receiveBatch } from './submission.ts';

/**
 * POST /batches/test: the same validation, duplicate check and rules as a
 * real batch, planned inside a transaction that is always rolled back and
 * writes nothing (not even a sequence value), answered synchronously. The
 * body is validated as it arrives and kept in memory only while it holds at
 * most TEST_BATCH_MAX_CHANGES changes: a longer one is read to its end and
 * refused (TooManyChanges) without being held.
 */
export async function testBatch(
  deps: ServiceDeps,
  body: AsyncIterable<Uint8Array>,
  apiVersion: XmlVersion,
  principal: string,
): Promise<BatchResult> {
  const max = deps.config.TEST_BATCH_MAX_CHANGES;
  let kept: Uint8Array[] = [];
  let tooMany = false;
  const { validated, sha256 } = await receiveBatch(deps, body, apiVersion, async (chunk, changesSoFar) => {
    if (changesSoFar > max) tooMany = true;
    if (tooMany) kept = [];
    else kept.push(chunk);
  });
  if (validated.changes > max) {
    throw new ServiceError(
      'TooManyChanges',
      `a test batch may hold at most ${max} changes; this one holds ${validated.changes}, so it was not processed`,
    );
  }
  const commands: ChangeCommand[] = [];
  const summary = await readBatch(bodySource(Buffer.concat(kept)), (command) => commands.push(command));
  kept = [];
  const batchId = summary.header.batchUuid?.toLowerCase() ?? randomUUID();
  const existing = await deps.db.batches.findState(batchId);
  if (existing && existing.status !== 'FAILED') {
    throw new ServiceError('BatchAlreadyExists', `batch ${batchId} already exists and has completed or is still running`);
  }
  const twin = await deps.db.batches.findLiveWithBody(sha256, batchId);
  if (twin) throw new ServiceError('BatchAlreadyExists', `the same batch body was already submitted as ${twin}`);

  return deps.db.revisions.rolledBack((transaction) =>
    applyBatchCommands(transaction, commands, {
      batchId,
      bodySha256: sha256,
      sender: summary.header.sender,
      principal,
      force: false,
      forceKeySecret: deps.config.forceKeySecret,
      commit: false,
    }),
  );
}
