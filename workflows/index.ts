// The worker's workflowsPath: every workflow type the worker runs.
export { batchWorkflow } from './batch.ts';
export { exportWorkflow } from './export.ts';
export { expiryWorkflow } from './expiry.ts';
