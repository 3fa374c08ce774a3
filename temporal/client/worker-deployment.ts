import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';

/** gRPC status codes the deployment calls answer with while the version is not ready to be made current. */
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;

/** When a worker makes its own version current (WORKER_VERSION_CURRENT). */
export type CurrentVersionPolicy = 'if-none' | 'always' | 'never';

export type CurrentVersionOutcome = 'made current' | 'already current' | 'another version is current' | 'left alone';

/** Between two looks at the deployment while this version registers (its first polls) or another caller changes it. */
const RETRY_MS = 1_000;

/** `deployment:buildId`, as the CLI, the Web UI and the TemporalWorkerDeploymentVersion search attribute spell a version. */
export function versionName(version: WorkerDeploymentVersion): string {
  return `${version.deploymentName}:${version.buildId}`;
}

/**
 * Makes `version` its deployment's current version (new workflows start on
 * it) as `policy` says: `if-none` only while the deployment has no current
 * version, so that the first start of a fresh Temporal needs no manual step
 * and a later release becomes current only by the deploy procedure
 * (docs/deployment.md); `always` whatever is current. Waits until the
 * version is registered (the server learns of it from the worker's first
 * polls) and retries when another caller changed the deployment between its
 * look and its change (the conflict token), or a task queue of the current
 * version has no poller of this one yet (a lane whose process starts later).
 * `stopped` ends the wait.
 */
export async function makeVersionCurrent(
  client: Client,
  version: WorkerDeploymentVersion,
  policy: CurrentVersionPolicy,
  stopped: () => boolean = () => false,
): Promise<CurrentVersionOutcome> {
  if (policy === 'never') return 'left alone';
  const service = client.workflowService;
  const namespace = client.options.namespace;
  while (!stopped()) {
    const described = await service
      .describeWorkerDeployment({ namespace, deploymentName: version.deploymentName })
      .catch((error: unknown) => (isGrpcServiceError(error) && error.code === NOT_FOUND ? undefined : Promise.reject(error)));
    const info = described?.workerDeploymentInfo;
    const current = info?.routingConfig?.currentDeploymentVersion?.buildId;
    if (current === version.buildId) return 'already current';
    if (current && policy === 'if-none') return 'another version is current';
    const registered = info?.versionSummaries?.some((summary) => summary.deploymentVersion?.buildId === version.buildId);
    if (described && registered) {
      try {
        await service.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: version.deploymentName,
          buildId: version.buildId,
          conflictToken: described.conflictToken,
          identity: client.options.identity,
        });
        return 'made current';
      } catch (error) {
        if (!isGrpcServiceError(error) || (error.code !== FAILED_PRECONDITION && error.code !== NOT_FOUND)) throw error;
      }
    }
    await new Promise<void>((resolve) => setTimeout(resolve, RETRY_MS));
  }
  return 'left alone';
}
