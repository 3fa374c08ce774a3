import { randomUUID } from 'node:crypto';
import type { ServiceDeps } from '../deps.ts';
import { ServiceError } from '../errors.ts';
import type { ExportKind } from '../../db/entities/export-request.ts';
import { pgPool } from '../../db/orm.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import type { ExportWorkflowInput } from '../../workflows/export.ts';
import { requireTransaction } from '../reads/updates.ts';
import type { RequestedId } from './ids.ts';
import { failExport, insertExport } from './requests.ts';

export interface ExportStart {
  kind: ExportKind;
  /** Empty: every record. */
  requestedIds: RequestedId[];
  /** Revisions exports only. */
  fromTransId?: string;
  principal: string;
}

const HOUR_MS = 3_600_000;

/**
 * Everything the export start operations do synchronously: resolve the
 * transaction, store the request, start its workflow (workflow ID = export
 * ID). The row exists before the workflow does.
 */
export async function startExport(deps: ServiceDeps, start: ExportStart): Promise<{ id: string }> {
  const pool = await pgPool(deps.orm);
  let fromSeq: string | undefined;
  if (start.kind === 'revisions') {
    if (start.fromTransId === undefined) throw new ServiceError('BadRequest', 'a revisions export needs fromTransId');
    fromSeq = (await requireTransaction(pool, start.fromTransId)).commitSeq;
  }
  const id = randomUUID();
  await insertExport(pool, { id, kind: start.kind, requestedIds: start.requestedIds, fromSeq, fromTransId: start.fromTransId, requestedBy: start.principal });

  const input: ExportWorkflowInput = { exportId: id, retentionMs: Math.round(deps.config.EXPORT_RETENTION_HOURS * HOUR_MS) };
  try {
    await deps.temporal.workflow.start(WORKFLOW_TYPES.export, {
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
    await failExport(pool, id, 'the export workflow could not be started');
    deps.log.error({ err: error, exportId: id }, 'could not start export workflow');
    throw new ServiceError('ServiceUnavailable', 'the workflow engine is not available; the export was not started, request it again later');
  }
  return { id };
}
