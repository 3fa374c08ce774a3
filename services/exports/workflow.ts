import type { WorkflowIdConflictPolicy } from '@temporalio/client';
import type { ExportKind } from '../../db/exports.ts';
import { WORKFLOW_TYPES } from '../../temporal/names.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import type { ExportWorkflowInput } from '../../temporal/contracts.ts';
import type { exportWorkflow } from '../../workflows/export.ts';
import type { ServiceDeps } from '../deps.ts';

/** A stored export, as the Temporal UI shows its workflow. */
export interface ExportRun {
  id: string;
  kind: ExportKind;
  /** The file's format when not the registry's v2 XML (EAC-CPF). */
  format?: string | null;
  requestedBy: string;
  /** How many ids were asked for (0: every record). */
  requestedCount: number;
  fromTransId?: string | null;
}

const HOUR_MS = 3_600_000;

/**
 * Starts the workflow of stored export `run.id` (workflow ID = export ID):
 * by its start, or by the recovery sweep for one kept ACCEPTED while
 * Temporal did not answer.
 */
export async function startExportRun(
  deps: Pick<ServiceDeps, 'config' | 'temporal'>,
  run: ExportRun,
  onConflict: WorkflowIdConflictPolicy,
): Promise<void> {
  const input: ExportWorkflowInput = { exportId: run.id, retentionMs: Math.round(deps.config.EXPORT_RETENTION_HOURS * HOUR_MS) };
  await deps.temporal.workflow.start<typeof exportWorkflow>(WORKFLOW_TYPES.export, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: run.id,
    args: [input],
    memo: {
      submitter: run.requestedBy,
      kind: run.kind,
      ...(run.format && run.format !== 'v2' ? { format: run.format } : {}),
      requestedIds: run.requestedCount,
      ...(run.fromTransId ? { fromTransId: run.fromTransId } : {}),
    },
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.submitter, value: run.requestedBy },
      { key: SEARCH_ATTRIBUTES.kind, value: run.kind },
    ],
    workflowIdConflictPolicy: onConflict,
  });
}
