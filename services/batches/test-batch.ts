import type pg from 'pg';
import type { AppDeps } from '../../api/deps.ts';
import { problem } from '../../api/problems.ts';
import { pgPool } from '../../db/orm.ts';
import type { BatchResult, ChangeCommand, XmlVersion } from '../../domain/model.ts';
import { validateBatchXml } from '../../domain/validation/index.ts';
import { readBatch } from '../../domain/xml/batch-reader.ts';
import { createHash, randomUUID } from 'node:crypto';
import { applyBatchCommands } from './apply.ts';
import { findBatch, findLiveBatchWithBody } from './store.ts';
import { bodySource } from './submission.ts';

class TooManyChanges extends Error {}

/**
 * POST /batches/test: the same validation, duplicate check and rules as a
 * real batch, planned inside a transaction that is always rolled back and
 * writes nothing (not even a sequence value), answered synchronously.
 */
export async function testBatch(deps: AppDeps, body: Buffer, apiVersion: XmlVersion, principal: string): Promise<BatchResult> {
  const { version } = await validateBatchXml(body);
  if (version !== apiVersion) throw problem(400, 'SchemaViolation', `this is the ${apiVersion} API; the document is a ${version} batch`);
  const max = deps.config.TEST_BATCH_MAX_CHANGES;
  const commands: ChangeCommand[] = [];
  let summary;
  try {
    summary = await readBatch(bodySource(body), (command) => {
      if (commands.length >= max) throw new TooManyChanges();
      commands.push(command);
    });
  } catch (error) {
    if (error instanceof TooManyChanges) {
      throw problem(422, 'TooManyChanges', `a test batch may hold at most ${max} changes; this one holds more, so it was not processed`);
    }
    throw error;
  }
  const sha256 = createHash('sha256').update(body).digest('hex');
  const batchId = summary.header.batchUuid?.toLowerCase() ?? randomUUID();
  const pool = await pgPool(deps.orm);
  const existing = await findBatch(pool, batchId);
  if (existing && existing.status !== 'FAILED') {
    throw problem(409, 'BatchAlreadyExists', `batch ${batchId} already exists and has completed or is still running`);
  }
  const twin = await findLiveBatchWithBody(pool, sha256, batchId);
  if (twin) throw problem(409, 'BatchAlreadyExists', `the same batch body was already submitted as ${twin}`);

  const client: pg.PoolClient = await pool.connect();
  try {
    await client.query('begin');
    return await applyBatchCommands(client, commands, {
      batchId,
      bodySha256: sha256,
      sender: summary.header.sender,
      principal,
      force: false,
      forceKeySecret: deps.config.forceKeySecret,
      commit: false,
    });
  } finally {
    await client.query('rollback').catch(() => undefined);
    client.release();
  }
}
