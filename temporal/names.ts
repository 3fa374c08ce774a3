// Names shared by the workflows, the worker and the API. Pure constants only:
// workflow code imports this module, so it must stay free of Node built-ins.
// Workflow IDs are the batch ID and the export ID themselves (DESIGN §1).

export const WORKFLOW_TYPES = {
  batch: 'batchWorkflow',
  export: 'exportWorkflow',
} as const;

export const QUERIES = {
  batchPhase: 'batchPhase',
} as const;
