// A deploy of a changed workflow while a batch of the previous release is
// mid-apply, by the procedure of docs/deployment.md (worker versioning,
// docs/decisions/0161-deploys-by-worker-versioning.md), each step with the
// `temporal` CLI command the procedure names: the new release's worker starts
// beside the old ones; its version is made current; the old version drains;
// the old workers are stopped. The new release (test/faults/deploy/) adds a
// step to the batch workflow with no patched() branch: a batch of the old
// release that replayed on it would fail its workflow task. The old batch
// finishes on the old version (no timer, its apply on attempt 1, on the old
// worker), the next batch runs on the new one (the timer), every workflow
// task of both is completed by its own version, and nothing is applied twice.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ensureTemporalBinary } from '../../../scripts/lib/temporal-binary.ts';
import { bundleBuildId } from '../../../worker/bundle.ts';
import { generatedBatch } from '../lib/data.ts';
import { startExtraWorker } from '../lib/processes.ts';
import { batchWriting, check, scalingScenario, type ScenarioContext } from '../lib/scenario.ts';
import { batchEnded } from '../../support/batch-ended.ts';
import { pollUntil } from '../../support/poll.ts';

const ENTITIES = 20_000;
const NEW = 100;
/** The stack's workers keep WORKER_DEPLOYMENT_NAME's default. */
const DEPLOYMENT = 'entity-records';

export const deploy = scalingScenario(
  {
    name: 'deploy',
    title: `a changed workflow (no patch) deployed by worker versioning while a ${ENTITIES.toLocaleString('en')}-entity batch of the previous release is mid-apply`,
    timeoutMs: 10 * 60_000,
  },
  runAtScale,
);

/** What the history of a workflow says about a deploy: its timers, failed workflow tasks and the build ids that completed its workflow tasks. */
async function historyFacts(
  address: string,
  workflowId: string,
): Promise<{ timers: number; taskFailures: string[]; buildIds: Set<string> }> {
  const connection = await Connection.connect({ address });
  try {
    const events = (await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    return {
      timers: events.filter((event) => event.timerStartedEventAttributes).length,
      taskFailures: events.flatMap((event) =>
        event.workflowTaskFailedEventAttributes ? [event.workflowTaskFailedEventAttributes.failure?.message ?? 'failed'] : [],
      ),
      buildIds: new Set(events.flatMap((event) => event.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId ?? [])),
    };
  } finally {
    await connection.close();
  }
}

interface VersionDescription {
  drainageInfo?: { drainageStatus?: string };
  taskQueuesInfos?: { name?: string; type?: string }[];
}

async function runAtScale({ stack, client, db, log, figures, workflows, ...context }: ScenarioContext, scale: number): Promise<void> {
  const entities = ENTITIES * scale;
  /** One `temporal worker deployment …` command of the procedure, against the stack's server; its JSON answer. */
  const cli = (...args: string[]): unknown => {
    const out = execFileSync(ensureTemporalBinary(), ['worker', 'deployment', ...args, '--address', stack.temporalAddress, '-o', 'json'], {
      encoding: 'utf8',
      // "not found" while a version registers is retried, not news.
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return out.trim() ? JSON.parse(out) : undefined;
  };
  const describeVersion = (buildId: string) =>
    cli('describe-version', '--deployment-name', DEPLOYMENT, '--build-id', buildId) as VersionDescription;

  const release = join(stack.scratch, 'next-release-bundle.js');
  const { code } = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../deploy/workflows.ts', import.meta.url)),
    logger: {
      log: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: console.error,
    },
  });
  writeFileSync(release, code);
  const oldBuild = bundleBuildId(readFileSync(stack.env.WORKFLOW_BUNDLE!, 'utf8'));
  const newBuild = bundleBuildId(code);

  const old = await generatedBatch(context, `dp${scale}`, entities);
  await client.submitBatchOk(old.body);
  const caught = await batchWriting(db, old.batchId, 'the new release could be deployed', 4 * 60_000);
  const holder = await pollUntil(async () => await workflows.startedActivity(old.batchId), {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: 'the worker holding the batch',
  });
  check(
    holder.worker.startsWith(`${stack.worker.pid}@`),
    `the batch is held by ${holder.worker}, not the bulk worker (pid ${stack.worker.pid})`,
  );

  // 1. The new release's workers (one process, both lanes), beside the old ones.
  const next = startExtraWorker(stack, 'worker-2', { WORKFLOW_BUNDLE: release });
  try {
    // 2. Current once it polls every task queue of the deployment (describe-version lists them).
    const queues = await pollUntil(
      async () => {
        const crashed = next.crashed();
        if (crashed) throw new Error(crashed);
        const listed = [...new Set((describeVersion(newBuild).taskQueuesInfos ?? []).map((queue) => queue.name))];
        return listed.length >= 3 ? listed : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: `version ${newBuild} to poll its task queues` },
    );
    cli('set-current-version', '--deployment-name', DEPLOYMENT, '--build-id', newBuild, '--yes');
    log(
      `deployed ${DEPLOYMENT}:${newBuild} (task queues ${queues.join(', ')}) at changesApplied ${caught.changesApplied}/${caught.changesTotal}; ${oldBuild} still running`,
    );
    const fresh = await generatedBatch(context, `dpn${scale}`, NEW);
    await client.submitBatchOk(fresh.body);

    for (const [batch, count] of [
      [old, entities],
      [fresh, NEW],
    ] as const) {
      const ended = await batchEnded(db.pool, batch.batchId, 4 * 60_000);
      check(ended.status === 'COMPLETED', `batch ${batch.batchId} ended ${ended.status}: ${ended.error}`);
      const violations = await db.exactlyOnceViolations(batch.batchId, batch.entityType, count);
      check(violations.length === 0, `not applied exactly once: ${violations.join('; ')}`);
    }

    // 3. Drained: no open workflow is pinned to the old version any more.
    const drainStarted = performance.now();
    await pollUntil(async () => (/^drained$/i.test(describeVersion(oldBuild).drainageInfo?.drainageStatus ?? '') ? true : undefined), {
      timeoutMs: 2 * 60_000,
      intervalMs: 1_000,
      what: `version ${oldBuild} to be drained`,
    });
    figures['old version drained after its last batch'] = `${((performance.now() - drainStarted) / 1000).toFixed(0)} s`;
    // 4. The old workers stop.
    await stack.killWorker('SIGTERM');
    await stack.killInteractiveWorker('SIGTERM');

    const [oldFacts, newFacts] = [
      await historyFacts(stack.temporalAddress, old.batchId),
      await historyFacts(stack.temporalAddress, fresh.batchId),
    ];
    log(
      `old batch: ${oldFacts.timers} timers, build ids ${[...oldFacts.buildIds].join(', ')}; new batch: ${newFacts.timers} timers, build ids ${[...newFacts.buildIds].join(', ')}`,
    );
    check(
      oldFacts.taskFailures.length === 0 && newFacts.taskFailures.length === 0,
      `workflow tasks failed: ${[...oldFacts.taskFailures, ...newFacts.taskFailures].join('; ')}`,
    );
    check(oldFacts.timers === 0 && [...oldFacts.buildIds].join() === oldBuild, "the old batch ran (in part) on the new release's code");
    check(newFacts.timers === 1 && [...newFacts.buildIds].join() === newBuild, 'the new batch did not run on the new release');
    const attempts = await workflows.finishedActivityAttempts(old.batchId);
    check(attempts[0]?.attempt === 1, `the old batch's apply completed on attempt ${attempts[0]?.attempt}, not 1`);
    check(!next.crashed(), next.crashed() ?? '');
    figures.deployed = 'old batch on its version (attempt 1), new batch on the new one, old version drained';
  } finally {
    await next.stop();
  }
}
