import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { BatchState, BatchUpload, StoredBody } from '../../db/batches.ts';
import type { SignedRequest } from '../../db/replay-guard.ts';
import type { XmlVersion } from '../../domain/model.ts';
import { BatchValidator, ValidationThreadLost, type BatchValidation, type ValidatedBatch } from '../../engine/validation/index.ts';
import { describeJobWorkflow, withTimeout } from '../../temporal/client/job-workflow.ts';
import { startBatchRun, type BatchRun } from './workflow.ts';

export interface BatchSubmission {
  /** The body as it arrives: the request stream (its reader enforces the size limit), or one Buffer. */
  body: AsyncIterable<Uint8Array>;
  apiVersion: XmlVersion;
  principal: string;
  force: boolean;
  /** Whether the principal holds the force permission; without it, force=true needs the forceKey this batch's result gave. */
  mayForce: boolean;
  forceKey?: string;
  /** The request's HMAC signature, when it is signed: claimed with the body's SHA-256 once the body has ended (db/replay-guard.ts). */
  signature?: Omit<SignedRequest, 'bodySha256'>;
}

/** A body already in memory, as the streaming reader's source. */
export async function* bodySource(body: Uint8Array): AsyncGenerator<Uint8Array> {
  yield body;
}

/** What an upload turned out to be, once all of it has been read. */
export interface ReceivedBatch {
  validated: ValidatedBatch;
  sha256: string;
  bytes: number;
}

/**
 * Reads an upload to its end: every chunk is hashed, validated against the
 * schema of its version (slice by slice, as it arrives, in a validation
 * thread of the process where `deps` hold them) and handed to `sink`
 * (which stores it) at the same time. Once the document is found invalid, or
 * its root shows the other API version's batch, nothing more is validated or
 * stored; after its first schema error it is still validated (every error is
 * listed) but no longer stored. Either way the body is still read to its
 * end, so that a body over the size limit is refused as such (413) whatever
 * it holds, as when bodies were read whole first, and the client is answered
 * after it has sent its body; then the validation error is thrown.
 * `abandon` is called at once when storing stops (the stored chunks can go).
 */
export async function receiveBatch(
  deps: Pick<ServiceDeps, 'validation'>,
  body: AsyncIterable<Uint8Array>,
  apiVersion: XmlVersion,
  sink: (chunk: Uint8Array, changesSoFar: number) => Promise<void>,
  abandon: () => Promise<void> = async () => undefined,
): Promise<ReceivedBatch> {
  const validator: BatchValidation = deps.validation?.open() ?? new BatchValidator();
  const hash = createHash('sha256');
  let bytes = 0;
  let invalid: unknown;
  // Off at the first schema error: the rest is still validated, for the list of errors, but no longer stored.
  let storing = true;
  try {
    for await (const chunk of body) {
      bytes += chunk.length;
      if (invalid !== undefined) continue;
      hash.update(chunk);
      const [checked, stored] = await Promise.allSettled([
        validator.push(chunk),
        storing ? sink(chunk, validator.changesSoFar) : undefined,
      ]);
      if (stored.status === 'rejected') throw stored.reason;
      // The other version's batch is refused as soon as its root is read, not once it is stored whole.
      const refusal = checked.status === 'rejected' ? unavailableIfLost(checked.reason) : wrongInterface(validator.version, apiVersion);
      if (refusal !== undefined) {
        invalid = refusal;
        validator.close();
        if (storing) await abandon();
      } else if (storing && validator.hasSchemaErrors) {
        storing = false;
        await abandon();
      }
    }
    if (invalid !== undefined) throw invalid;
    const validated = await validator.end().catch((error: unknown) => {
      throw unavailableIfLost(error);
    });
    const refusal = wrongInterface(validated.version, apiVersion);
    if (refusal !== undefined) throw refusal;
    return { validated, sha256: hash.digest('hex'), bytes };
  } finally {
    validator.close();
  }
}

/**
 * A validation thread that died answers 503, not InvalidXml: what killed it
 * may be another upload of the same thread or the machine's memory, and the
 * client of a good batch is to send it again, not to look for an error in it.
 */
function unavailableIfLost(error: unknown): unknown {
  if (!(error instanceof ValidationThreadLost)) return error;
  return new ServiceError('ServiceUnavailable', 'the batch could not be validated (its validation thread stopped); send it again');
}

/** A batch of one version sent to the other's interface: the reader sent it to the wrong place, not a wrong document, so say where it goes. */
function wrongInterface(found: XmlVersion | undefined, apiVersion: XmlVersion): ServiceError | undefined {
  if (found === undefined || found === apiVersion) return undefined;
  return new ServiceError(
    'SchemaViolation',
    `the document is a ${found} batch, and this is the ${apiVersion} interface: send ${found} batches to /api/${found}/batches`,
  );
}

/**
 * Everything POST /batches does synchronously: validate the body and store
 * it as it arrives (db/batch-upload.ts), check the batch
 * is new, then start its workflow. The chunks, the batch row and its
 * batch_body row are one transaction: a body that turns out invalid, too
 * large or cut off leaves nothing behind. The batch row exists before the
 * workflow does, and PostgreSQL (not Temporal's retention) is the lasting
 * guard against duplicates.
 */
export async function submitBatch(deps: ServiceDeps, submission: BatchSubmission): Promise<{ batchId: string }> {
  const upload = deps.db.batches.openUpload();
  let outcome: { batchId: string; run: BatchRun; resumed: boolean };
  try {
    const { validated, sha256, bytes } = await receiveBatch(
      deps,
      submission.body,
      submission.apiVersion,
      (chunk) => upload.write(chunk),
      () => upload.discard(),
    );
    const body = await upload.finish();
    const batchId = validated.batchUuid?.toLowerCase() ?? randomUUID();
    // First in the transaction: a refused reuse of a signature stores nothing, whatever the body holds.
    if (submission.signature) await upload.claimSignature({ ...submission.signature, bodySha256: Buffer.from(sha256, 'hex') }, batchId);
    const resumed = await recordBatch(deps, upload, submission, { id: batchId, sha256, changes: validated.changes, body });
    // A resumed row keeps the body stored with it: this upload's copy of the same bytes goes.
    if (resumed) await upload.discard();
    else await upload.commit();
    outcome = {
      batchId,
      resumed,
      run: { batchId, submitter: submission.principal, apiVersion: submission.apiVersion, changes: validated.changes, bytes },
    };
  } finally {
    await upload.discard();
  }
  await startBatchWorkflow(deps, outcome.run, outcome.resumed);
  return { batchId: outcome.batchId };
}

/** The duplicate checks and the batch row, in the upload's transaction; true when an ACCEPTED row of the same submission is resumed. */
async function recordBatch(
  deps: ServiceDeps,
  upload: BatchUpload,
  submission: BatchSubmission,
  batch: { id: string; sha256: string; changes: number; body: StoredBody },
): Promise<boolean> {
  const { id: batchId, sha256 } = batch;
  const twin = await upload.findLiveWithBody(sha256, batchId);
  if (twin) throw new ServiceError('BatchAlreadyExists', `the same batch body was already submitted as ${twin}`);
  const force = submission.force && submission.mayForce;
  const keyOffered = submission.forceKey !== undefined && (await offersIssuedForceKey(deps, batchId, sha256, submission.forceKey));
  if (submission.force && !force && !keyOffered) {
    throw new ServiceError('Forbidden', "force=true needs the 'force' permission, or the forceKey that this batch's result gave");
  }
  // Another principal's FAILED batch is revived only by a principal that may force, or with that batch's own force key.
  const stored = await upload.store(
    {
      id: batchId,
      sha256,
      apiVersion: submission.apiVersion,
      submittedBy: submission.principal,
      force,
      offeredForceKey: submission.forceKey,
      changesTotal: batch.changes,
      reviveOthers: submission.mayForce || keyOffered,
    },
    batch.body,
  );
  if (stored) return false;
  // An API that died between this commit and the workflow start left the
  // batch ACCEPTED with no workflow: the same submission sent again starts it.
  const existing = await deps.db.batches.findState(batchId);
  if (existing && isSameSubmission(existing, sha256, submission)) return true;
  if (existing?.status === 'FAILED')
    throw new ServiceError(
      'BatchAlreadyExists',
      `batch ${batchId} failed under another principal; only its submitter, a principal with the 'force' permission, or its forceKey may send it again`,
    );
  throw new ServiceError('BatchAlreadyExists', `batch ${batchId} already exists and has completed or is still running`);
}

/**
 * The real client forces a batch by sending the same XML under the same id
 * with force=true and the forceKey of its failure: that key alone authorises
 * the write (the apply still checks it against the warnings of the moment).
 */
async function offersIssuedForceKey(deps: ServiceDeps, batchId: string, sha256: string, forceKey: string | undefined): Promise<boolean> {
  if (forceKey === undefined) return false;
  const existing = await deps.db.batches.find(batchId);
  return (
    existing?.status === 'FAILED' &&
    existing.bodySha256 === sha256 &&
    existing.result?.outcome === 'failure' &&
    existing.result.forceKey === forceKey
  );
}

function isSameSubmission(existing: BatchState, sha256: string, submission: BatchSubmission): boolean {
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

/**
 * How long a submission waits for Temporal to start its workflow, an ending
 * run's grace included (else the grace could never end in a replacement).
 * Beyond it, a v2 batch stays ACCEPTED for the sweep to start, and a v1
 * batch is refused.
 */
const START_TIMEOUT_MS = ENDING_RUN_GRACE_MS + 5_000;

/**
 * Starts the batch's workflow. The ACCEPTED row is the outbox: when Temporal
 * does not answer, a v2 batch is kept as it is and answered as usual, and
 * the recovery sweep (recovery.ts) starts its workflow once Temporal is back.
 * A v1 batch is synchronous and its client sends a refused save again under a
 * new id, so it is removed and refused at once: a late apply of the first
 * copy would duplicate the save.
 */
async function startBatchWorkflow(deps: ServiceDeps, run: BatchRun, resumed: boolean): Promise<void> {
  const { batchId } = run;
  const abort = new AbortController();
  try {
    // The abort ends the call and the client's retries of it; the timeout answers the client whether or not they end at once.
    const starting = deps.temporal.withAbortSignal(abort.signal, async () => {
      // A resumed ACCEPTED row: an open run is the batch's own, so it must stay (409 below).
      if (resumed) await startBatchRun(deps, run, 'FAIL');
      else await startReplacingEndingRun(deps, run);
    });
    starting.catch(() => undefined);
    await withTimeout(starting, START_TIMEOUT_MS, `starting the workflow of batch ${batchId}`);
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      throw new ServiceError('BatchAlreadyExists', `batch ${batchId} is still running`);
    }
    if (run.apiVersion === 'v1') {
      const discarded = await deps.db.batches.discardAccepted(batchId);
      deps.log.error({ err: error, batchId, discarded }, 'could not start batch workflow; the v1 batch was refused');
      throw new ServiceError('ServiceUnavailable', 'the workflow engine is not available; the batch was not accepted, send it again later');
    }
    deps.log.warn(
      { err: error, batchId },
      'could not start batch workflow; the batch stays ACCEPTED and the recovery sweep starts it once Temporal answers',
    );
  } finally {
    abort.abort();
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
