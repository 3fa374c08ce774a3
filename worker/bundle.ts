import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';
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

/** The code of the workflow bundle of WORKFLOWS_PATH and the workflow interceptors. */
async function workflowBundleCode(): Promise<string> {
  const bundle = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: warningsOnly,
  });
  return bundle.code;
}

/** Builds the workflow bundle into `out` (workers load it with workflowBundle.codePath). */
export async function buildWorkflowBundle(out: string): Promise<void> {
  writeFileSync(out, await workflowBundleCode());
}

/**
 * A worker deployment build id of a workflow bundle: its content hash. Every
 * process of a release loads the same bundle and so declares the same
 * version; a change to any workflow code gives a new one.
 */
export function bundleBuildId(code: string): string {
  return createHash('sha256').update(code).digest('hex').slice(0, 16);
}

/**
 * The bundle a worker loads and its build id: the prebuilt one at `codePath`
 * (WORKFLOW_BUNDLE), or one bundled here, in this process, when none is given.
 */
export async function loadWorkflowBundle(
  codePath: string | undefined,
): Promise<{ bundle: WorkerOptions['workflowBundle']; buildId: string }> {
  if (codePath) return { bundle: { codePath }, buildId: bundleBuildId(readFileSync(codePath, 'utf8')) };
  const code = await workflowBundleCode();
  return { bundle: { code }, buildId: bundleBuildId(code) };
}
