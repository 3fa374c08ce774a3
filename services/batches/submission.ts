import { createHash, randomUUID } from 'node:crypto';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import type { AppDeps } from '../api/deps.ts';
import { WORKFLOW_TYPES } from '../temporal/names.ts';
import type { BatchWorkflowInput } from '../workflows/batch.ts';

export interface SubmittedBatch {
  batchId: string;
}

export interface BatchSubmission {
  body: Buffer;
  apiVersion: 'v1' | 'v2';
  principal: string;
}

/** Stores a batch and starts its workflow; the batch row exists before the workflow does. */
export async function submitBatch(deps: AppDeps, submission: BatchSubmission): Promise<SubmittedBatch> {
  const batchId = randomUUID();
  const sha256 = createHash('sha256').update(submission.body).digest('hex');
  const connection = deps.orm.em.getConnection();
  await deps.orm.em.transactional(async (em) => {
    const tx = em.getTransactionContext();
    await connection.execute(
      `insert into batch (id, body_sha256, api_version, submitted_by, status) values (?, ?, ?, ?, 'ACCEPTED')`,
      [batchId, sha256, submission.apiVersion, submission.principal],
      'run',
      tx,
    );
    await connection.execute(
      `insert into batch_body (batch_id, bytes, body) values (?, ?, ?)`,
      [batchId, submission.body.length, submission.body],
      'run',
      tx,
    );
  });
  const input: BatchWorkflowInput = { batchId };
  await deps.temporal.workflow.start(WORKFLOW_TYPES.batch, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: batchId,
    args: [input],
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
  return { batchId };
}
