import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import { inTransaction, type Queryable } from '../../db/sql.ts';
import { pgPool } from '../../db/orm.ts';
import type { XmlVersion } from '../../domain/model.ts';
import { validateBatchXml, type ValidatedBatch } from '../../domain/validation/index.ts';
import { findBatch, finishBatch, findLiveBatchWithBody, storeBatch, type BatchRow } from './store.ts';
import { describeJobWorkflow } from '../../temporal/job-workflow.ts';
import { startBatchRun, type BatchRun } from './workflow.ts';

export interface BatchSubmission {
  body: Buffer;
  apiVersion: XmlVersion;
  principal: string;
  force: boolean;
  /** Whether the principal holds the force permission; without it, force=true needs the forceKey this batch's result gave. */
  mayForce: boolean;
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
    throw new ServiceError('SchemaViolation', `this is the ${apiVersion} API; the document is a ${validated.version} batch`);
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
export async function submitBatch(deps: ServiceDeps, submission: BatchSubmission): Promise<{ batchId: string }> {
  const validated = await validateSubmittedBatch(submission.body, submission.apiVersion);
  const sha256 = createHash('sha256').update(submission.body).digest('hex');
  const batchId = validated.batchUuid?.toLowerCase() ?? randomUUID();
  const pool = await pgPool(deps.orm);
  const resumed = await inTransaction(pool, async (client) => {
    const twin = await findLiveBatchWithBody(client, sha256, batchId);
    if (twin) throw new ServiceError('BatchAlreadyExists', `the same batch body was already submitted as ${twin}`);
    const force = submission.force && submission.mayForce;
    if (submission.force && !force && !(await offersIssuedForceKey(client, batchId, sha256, submission.forceKey))) {
      throw new ServiceError('Forbidden', "force=true needs the 'force' permission, or the forceKey that this batch's result gave");
    }
    const stored = await storeBatch(client, {
      id: batchId,
      sha256,
      apiVersion: submission.apiVersion,
      submittedBy: submission.principal,
      force,
      offeredForceKey: submission.forceKey,
      changesTotal: validated.changes,
      body: submission.body,
    });
    if (stored) return false;
    // An API that died between this commit and the workflow start left the
    // batch ACCEPTED with no workflow: the same submission sent again starts it.
    const existing = await findBatch(client, batchId);
    if (existing && isSameSubmission(existing, sha256, submission)) return true;
    throw new ServiceError('BatchAlreadyExists', `batch ${batchId} already exists and has completed or is still running`);
  });
  const run = { batchId, submitter: submission.principal, apiVersion: submission.apiVersion, changes: validated.changes, bytes: submission.body.length };
  await startBatchWorkflow(deps, run, resumed);
  return { batchId };
}

/**
 * The real client forces a batch by sending the same XML under the same id
 * with force=true and the forceKey of its failure: that key alone authorises
 * the write (the apply still checks it against the warnings of the moment).
 */
async function offersIssuedForceKey(client: Queryable, batchId: string, sha256: string, forceKey: string | undefined): Promise<boolean> {
  if (forceKey === undefined) return false;
  const existing = await findBatch(client, batchId);
  return existing?.status === 'FAILED' && existing.bodySha256 === sha256 && existing.result?.outcome === 'failure' && existing.result.forceKey === forceKey;
}

function isSameSubmission(existing: BatchRow, sha256: string, submission: BatchSubmission): boolean {
  return (
    existing.status === 'ACCEPTED' &&
    existing.bodySha256 === sha256 &&
    existing.apiVersion === submission.apiVersion &&
    existing.submittedBy === submission.principal &&
    existing.force === (submission.force && submission.mayForce) &&
    (existing.offeredForceKey ?? undefined) === submission.forceKey
  );
}

/** How long a new run waits for an open run under its id, which has only its own ending left, to close by itself. */
const ENDING_RUN_GRACE_MS = 5_000;

async function startBatchWorkflow(deps: ServiceDeps, run: BatchRun, resumed: boolean): Promise<void> {
  const { batchId } = run;
  try {
    // A resumed ACCEPTED row: an open run is the batch's own, so it must stay (409 below).
    if (resumed) await startBatchRun(deps, run, 'FAIL');
    else await startReplacingEndingRun(deps, run);
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      throw new ServiceError('BatchAlreadyExists', `batch ${batchId} is still running`);
    }
    const pool = await pgPool(deps.orm);
    await finishBatch(pool, batchId, 'FAILED', null, 'the batch workflow could not be started');
    deps.log.error({ err: error, batchId }, 'could not start batch workflow');
    throw new ServiceError('ServiceUnavailable', 'the workflow engine is not available; the batch was not accepted, send it again later');
  }
}

/**
 * A new or revived row: a run still open under this id has only its own
 * ending left to do (it wrote FAILED before closing), as when a client
 * forces a batch the moment it has read the failure. That run is given a
 * moment to close: terminated in the middle of its last workflow task, it
 * would leave its worker a warning about a task that no longer exists. One
 * still open after that is replaced, which loses nothing and spares the
 * client a 409.
 */
async function startReplacingEndingRun(deps: ServiceDeps, run: BatchRun): Promise<void> {
  try {
    await startBatchRun(deps, run, 'FAIL');
    return;
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  const deadline = Date.now() + ENDING_RUN_GRACE_MS;
  while (Date.now() < deadline) {
    const open = await describeJobWorkflow(deps.temporal, run.batchId).catch(() => undefined);
    if (!open || open.closed) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await startBatchRun(deps, run, 'TERMINATE_EXISTING');
}
