import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from './create-worker.ts';

const silent = () => undefined;
const warningsOnly = { log: silent, trace: silent, debug: silent, info: silent, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };

/** Builds the workflow bundle of WORKFLOWS_PATH into `out` (workers load it with workflowBundle.codePath). */
export async function buildWorkflowBundle(out: string): Promise<void> {
  const bundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: warningsOnly });
  writeFileSync(out, bundle.code);
}
