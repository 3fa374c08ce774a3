import { createHash, randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { ExportFormatContext, ExportKind } from '../../db/exports.ts';
import type { SignedRequest } from '../../db/replay-guard.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import type { ExportWorkflowInput } from '../../temporal/contracts.ts';
import type { exportWorkflow } from '../../workflows/export.ts';
import { requireTransaction } from '../reads/updates.ts';
import type { RequestedId } from './ids.ts';

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

const HOUR_MS = 3_600_000;
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
 * ID). The row exists before the workflow does. A replay of a signed request
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

  const input: ExportWorkflowInput = { exportId: id, retentionMs: Math.round(deps.config.EXPORT_RETENTION_HOURS * HOUR_MS) };
  try {
    await deps.temporal.workflow.start<typeof exportWorkflow>(WORKFLOW_TYPES.export, {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowId: id,
      args: [input],
      memo: {
        submitter: start.principal,
        kind: start.kind,
        ...(start.format ? { format: start.format.name } : {}),
        requestedIds: start.requestedIds.length,
        ...(start.fromTransId ? { fromTransId: start.fromTransId } : {}),
      },
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.submitter, value: start.principal },
        { key: SEARCH_ATTRIBUTES.kind, value: start.kind },
      ],
    });
  } catch (error) {
    await deps.db.exports.fail(id, 'the export workflow could not be started');
    // The client was told to send it again: that resend must start an export, not get this failed one.
    if (signedRequest) await deps.db.replayGuard.release(signedRequest, id);
    deps.log.error({ err: error, exportId: id }, 'could not start export workflow');
    throw new ServiceError(
      'ServiceUnavailable',
      'the workflow engine is not available; the export was not started, request it again later',
    );
  }
  return { id };
}
