import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { AppDeps } from '../../api/deps.ts';
import { problem } from '../../api/problems.ts';
import { inTransaction } from '../../db/sql.ts';
import { pgPool } from '../../db/orm.ts';
import type { XmlVersion } from '../../domain/model.ts';
import { validateBatchXml, type ValidatedBatch } from '../../domain/validation/index.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import type { BatchWorkflowInput } from '../../workflows/batch.ts';
import { finishBatch, findLiveBatchWithBody, storeBatch } from './store.ts';

export interface BatchSubmission {
  body: Buffer;
  apiVersion: XmlVersion;
  principal: string;
  force: boolean;
  forceKey?: string;
}

/**
 * Validates a batch body against the schema of the API version it was sent
 * to; the validator also counts the changes and reads the batch UUID, so the
 * body is parsed once here (the worker reads it again to apply it).
 */
export async function validateSubmittedBatch(body: Buffer, apiVersion: XmlVersion): Promise<ValidatedBatch> {
  const validated = await validateBatchXml(body);
  if (validated.version !== apiVersion) {
    throw problem(400, 'SchemaViolation', `this is the ${apiVersion} API; the document is a ${validated.version} batch`);
  }
  return validated;
}

/** A body already in memory, as the streaming reader's source. */
export async function* bodySource(body: Buffer): AsyncGenerator<Buffer> {
  yield body;
}

/**
 * Everything POST /batches does synchronously: validate, check the batch is
 * new, store it, start its workflow. The batch row exists before the
 * workflow does, and PostgreSQL (not Temporal's retention) is the lasting
 * guard against duplicates.
 */
export async function submitBatch(deps: AppDeps, submission: BatchSubmission): Promise<{ batchId: string }> {
  const validated = await validateSubmittedBatch(submission.body, submission.apiVersion);
  const sha256 = createHash('sha256').update(submission.body).digest('hex');
  const batchId = validated.batchUuid?.toLowerCase() ?? randomUUID();
  const pool = await pgPool(deps.orm);
  await inTransaction(pool, async (client) => {
    const twin = await findLiveBatchWithBody(client, sha256, batchId);
    if (twin) throw problem(409, 'BatchAlreadyExists', `the same batch body was already submitted as ${twin}`);
    const stored = await storeBatch(client, {
      id: batchId,
      sha256,
      apiVersion: submission.apiVersion,
      submittedBy: submission.principal,
      force: submission.force,
      offeredForceKey: submission.forceKey,
      changesTotal: validated.changes,
      body: submission.body,
    });
    if (!stored) throw problem(409, 'BatchAlreadyExists', `batch ${batchId} already exists and has completed or is still running`);
  });
  await startBatchWorkflow(deps, batchId);
  return { batchId };
}

async function startBatchWorkflow(deps: AppDeps, batchId: string): Promise<void> {
  const input: BatchWorkflowInput = { batchId };
  try {
    await deps.temporal.workflow.start(WORKFLOW_TYPES.batch, {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowId: batchId,
      args: [input],
      // A FAILED batch may run again under its id; the database already refused anything else.
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      // The row said FAILED, so a run still open under this id has only its own ending left to do
      // (it wrote FAILED before closing): replacing it loses nothing and spares the client a 409.
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      throw problem(409, 'BatchAlreadyExists', `batch ${batchId} is still running`);
    }
    const pool = await pgPool(deps.orm);
    await finishBatch(pool, batchId, 'FAILED', null, 'the batch workflow could not be started');
    deps.log.error({ err: error, batchId }, 'could not start batch workflow');
    throw problem(503, 'ServiceUnavailable', 'the workflow engine is not available; the batch was not accepted, send it again later');
  }
}
