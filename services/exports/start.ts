import { createHash, randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { ExportFormatContext, ExportKind } from '../../db/exports.ts';
import type { SignedRequest } from '../../db/replay-guard.ts';
import { withTimeout } from '../../temporal/client/job-workflow.ts';
import { requireTransaction } from '../reads/updates.ts';
import type { RequestedId } from './ids.ts';
import { startExportRun } from './workflow.ts';

export interface ExportStart {
  kind: ExportKind;
  /** v2 when absent; EAC-CPF for snapshots only, with what its records say of the registry. */
  format?: { name: 'eac-cpf'; context: ExportFormatContext };
  /** Empty: every record. */
  requestedIds: RequestedId[];
  /** Revisions exports only. */
  fromTransId?: string;
  principal: string;
  /** The signed request that asks for it: a replay of that request is answered with the same export. */
  signedRequest?: SignedRequest;
}

/**
 * How long a start waits for Temporal to start the workflow: a start takes
 * milliseconds when Temporal answers (and the health check gives it as long).
 * Beyond it the client is answered at once, and the export waits ACCEPTED
 * for the recovery sweep; a start that did reach Temporal runs as usual.
 */
const START_WAIT_MS = 2_000;
/** Retry-After of a start refused for the principal's running exports: about what a small export takes. */
const RETRY_RUNNING_SECONDS = 30;
/** Retry-After of a start refused for the disk budget: files go at the expiry schedule's pace. */
const RETRY_DISK_SECONDS = 300;

/** What makes two export requests identical: kind, the transaction a revisions export starts after, the ids as given, and a format other than v2. */
function exportRequestKey(
  kind: ExportKind,
  fromSeq: string | undefined,
  requestedIds: readonly RequestedId[],
  format: ExportStart['format'],
): string {
  return createHash('sha256')
    .update(JSON.stringify([kind, fromSeq ?? null, requestedIds, ...(format === undefined ? [] : [format])]))
    .digest('hex');
}

/**
 * Everything the export start operations do synchronously: resolve the
 * transaction, store the request, start its workflow (workflow ID = export
 * ID). The row exists before the workflow does, and stays ACCEPTED when
 * Temporal does not answer (docs/decisions/0186). A replay of a signed request
 * (the same key, signature and body, within the signature's window) starts
 * nothing: it gets the export the first one started, from whichever API
 * process answered that one. Nor does a request identical to a recent valid
 * export (EXPORT_REUSE_SECONDS): it gets that export. A principal with
 * EXPORTS_RUNNING_PER_PRINCIPAL exports running, or whose files fill
 * EXPORT_DISK_BYTES_PER_PRINCIPAL, is refused (429), and so is everyone while
 * the files fill EXPORT_DISK_BUDGET_BYTES (503).
 */
export async function startExport(deps: ServiceDeps, start: ExportStart): Promise<{ id: string }> {
  let fromSeq: string | undefined;
  if (start.kind === 'revisions' && start.format !== undefined)
    throw new ServiceError('BadRequest', `a revisions export is written in v2 XML only; format=${start.format.name} is for snapshots`);
  if (start.kind === 'revisions') {
    if (start.fromTransId === undefined) throw new ServiceError('BadRequest', 'a revisions export needs fromTransId');
    fromSeq = (await requireTransaction(deps.db.feed, start.fromTransId)).commitSeq;
  }
  const id = randomUUID();
  const { signedRequest } = start;
  const { config } = deps;
  const bounds = {
    reuseSeconds: config.EXPORT_REUSE_SECONDS,
    runningPerPrincipal: config.EXPORTS_RUNNING_PER_PRINCIPAL,
    diskBudgetBytes: config.EXPORT_DISK_BUDGET_BYTES,
    diskBytesPerPrincipal: config.EXPORT_DISK_BYTES_PER_PRINCIPAL,
  };
  const requestKey = exportRequestKey(start.kind, fromSeq, start.requestedIds, start.format);
  // The claim and the row commit together: a replay waiting on the claim finds the row it is answered with.
  const admission = await deps.db.exports.create(
    {
      id,
      kind: start.kind,
      format: start.format?.name,
      formatContext: start.format?.context,
      requestedIds: start.requestedIds,
      requestKey,
      fromSeq,
      fromTransId: start.fromTransId,
      requestedBy: start.principal,
    },
    signedRequest,
    bounds,
  );
  if ('refused' in admission) {
    if (admission.refused === 'running') {
      throw new ServiceError(
        'TooManyRequests',
        `this principal already has ${admission.running} exports running, its limit; request another when one has ended`,
        undefined,
        { reason: 'ExportsRunning', limit: bounds.runningPerPrincipal, retryAfterSeconds: RETRY_RUNNING_SECONDS },
      );
    }
    if (admission.refused === 'share') {
      throw new ServiceError(
        'TooManyRequests',
        "this principal's export files fill its share of the disk; request another export when older ones have expired",
        undefined,
        { reason: 'ExportDiskShare', limit: bounds.diskBytesPerPrincipal, retryAfterSeconds: RETRY_DISK_SECONDS },
      );
    }
    throw new ServiceError(
      'ServiceUnavailable',
      'the export files fill their disk budget; request the export again when older files have expired',
      undefined,
      {
        reason: 'ExportDiskBudget',
        retryAfterSeconds: RETRY_DISK_SECONDS,
      },
    );
  }
  if (admission.outcome !== 'started') return { id: admission.id };

  // The ACCEPTED row is the outbox, as a v2 batch's: when Temporal does not answer at once the export is kept and
  // answered as usual, and the recovery sweep (services/batches/recovery.ts) starts its workflow once Temporal is back.
  const abort = new AbortController();
  try {
    const starting = deps.temporal.withAbortSignal(abort.signal, () =>
      startExportRun(
        deps,
        {
          id,
          kind: start.kind,
          format: start.format?.name,
          requestedBy: start.principal,
          requestedCount: start.requestedIds.length,
          fromTransId: start.fromTransId,
        },
        'FAIL',
      ),
    );
    starting.catch(() => undefined);
    await withTimeout(starting, START_WAIT_MS, `starting the workflow of export ${id}`);
  } catch (error) {
    deps.log.warn(
      { err: error, exportId: id },
      'could not start export workflow; the export stays ACCEPTED and the recovery sweep starts it once Temporal answers',
    );
  } finally {
    abort.abort();
  }
  return { id };
}
