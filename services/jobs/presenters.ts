import { batchDetailView, batchProcessStatus, type BatchDetailView, type ProcessStatus } from '../batches/status.ts';
import type { BatchState } from '../../db/batches.ts';
import type { ExportState } from '../../db/exports.ts';
import { exportProcessStatus, exportStatusView, type ExportStatusView } from '../exports/status.ts';
import type { JobView, JobWorkflowView } from './view.ts';

// A job view in the shapes the API answers: the real client's {state,
// progress}, and our extension resources with the workflow behind the job.
// The shapes themselves are the batches' and exports' own (status.ts).

export interface JobDetailExtras {
  /** Where state and progress come from: the running workflow, or the database row. */
  source: JobView<unknown>['source'];
  workflow: JobWorkflowView;
}

export function batchJobStatus(view: JobView<BatchState>): ProcessStatus {
  return batchProcessStatus(view.row);
}

export function batchJobDetail(view: JobView<BatchState>): BatchDetailView & JobDetailExtras {
  return { ...batchDetailView(view.row), source: view.source, workflow: view.workflow };
}

export function exportJobStatus(view: JobView<ExportState>): ProcessStatus {
  return exportProcessStatus(view.row);
}

export function exportJobDetail(view: JobView<ExportState>): ExportStatusView & JobDetailExtras {
  return { ...exportStatusView(view.row), source: view.source, workflow: view.workflow };
}
