import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from './create-worker.ts';

const silent = () => undefined;
const warningsOnly = {
  log: silent,
  trace: silent,
  debug: silent,
  info: silent,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

/** Builds the workflow bundle of WORKFLOWS_PATH and the workflow interceptors into `out` (workers load it with workflowBundle.codePath). */
export async function buildWorkflowBundle(out: string): Promise<void> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: warningsOnly,
  });
  writeFileSync(out, bundle.code);
}
