import { randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { ExportKind } from '../../db/exports.ts';
import type { SignedRequest } from '../../db/replay-guard.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import type { ExportWorkflowInput } from '../../temporal/contracts.ts';
import type { exportWorkflow } from '../../workflows/export.ts';
import { requireTransaction } from '../reads/updates.ts';
import type { RequestedId } from './ids.ts';

export interface ExportStart {
  kind: ExportKind;
  /** Empty: every record. */
  requestedIds: RequestedId[];
  /** Revisions exports only. */
  fromTransId?: string;
  principal: string;
  /** The signed request that asks for it: a replay of that request is answered with the same export. */
  signedRequest?: SignedRequest;
}

const HOUR_MS = 3_600_000;

/**
 * Everything the export start operations do synchronously: resolve the
 * transaction, store the request, start its workflow (workflow ID = export
 * ID). The row exists before the workflow does. A replay of a signed request
 * (the same key, signature and body, within the signature's window) starts
 * nothing: it gets the export the first one started, from whichever API
 * process answered that one.
 */
export async function startExport(deps: ServiceDeps, start: ExportStart): Promise<{ id: string }> {
  let fromSeq: string | undefined;
  if (start.kind === 'revisions') {
    if (start.fromTransId === undefined) throw new ServiceError('BadRequest', 'a revisions export needs fromTransId');
    fromSeq = (await requireTransaction(deps.db.feed, start.fromTransId)).commitSeq;
  }
  const id = randomUUID();
  const { signedRequest } = start;
  // The claim and the row commit together: a replay waiting on the claim finds the row it is answered with.
  const standing = await deps.db.exports.create(
    { id, kind: start.kind, requestedIds: start.requestedIds, fromSeq, fromTransId: start.fromTransId, requestedBy: start.principal },
    signedRequest,
  );
  if (standing !== id) return { id: standing };

  const input: ExportWorkflowInput = { exportId: id, retentionMs: Math.round(deps.config.EXPORT_RETENTION_HOURS * HOUR_MS) };
  try {
    await deps.temporal.workflow.start<typeof exportWorkflow>(WORKFLOW_TYPES.export, {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowId: id,
      args: [input],
      memo: { submitter: start.principal, kind: start.kind, requestedIds: start.requestedIds.length, ...(start.fromTransId ? { fromTransId: start.fromTransId } : {}) },
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
    throw new ServiceError('ServiceUnavailable', 'the workflow engine is not available; the export was not started, request it again later');
  }
  return { id };
}
