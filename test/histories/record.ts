// npm run histories:record [-- --tag NAME]
//
// Records the history of every job workflow scenario (scenarios.ts) with the
// current workflow code into test/histories/<tag>/, a directory of its own
// that must not exist yet: recorded histories are never changed, and removed
// only when no running workflow can replay them on new code (a patch retired,
// or a pinned workflow's change: docs/decisions/0161-deploys-by-worker-versioning.md).
// The tag defaults to today's date. npm test replays every recorded history
// against the current bundle (test/integration/replay.test.ts).
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import proto from '@temporalio/proto';
import { Runtime, Worker } from '@temporalio/worker';
import { ensureTemporalBinary } from '../../scripts/lib/temporal-binary.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import { makeVersionCurrent } from '../../temporal/client/worker-deployment.ts';
import { bundleBuildId, buildWorkflowBundle } from '../../worker/bundle.ts';
import { HISTORY_SCENARIOS, scenarioTaskQueues, type Activities } from './scenarios.ts';

const HISTORIES_DIR = new URL('.', import.meta.url).pathname;
const { values } = parseArgs({ options: { tag: { type: 'string', default: new Date().toISOString().slice(0, 10) } } });
const tag = values.tag!;
if (!/^[a-z0-9][a-z0-9.-]*$/.test(tag)) throw new Error(`--tag ${tag}: use lower-case letters, digits, dots and dashes`);
const outDir = join(HISTORIES_DIR, tag);
if (existsSync(outDir)) {
  process.stderr.write(`test/histories/${tag} exists already: recorded histories are append-only; choose another --tag\n`);
  process.exit(2);
}

const quiet = () => undefined;
// The core's warnings of an activity ended by a terminate are expected here: forwarded to the quiet logger.
Runtime.install({ logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m: string) => console.error(m) }, telemetryOptions: { logging: { forward: {} } } });
const scratch = mkdtempSync(join(tmpdir(), 'histories-'));
const bundlePath = join(scratch, 'bundle.js');
await buildWorkflowBundle(bundlePath);
const env = await TestWorkflowEnvironment.createLocal({
  server: {
    executable: { type: 'existing-path', path: ensureTemporalBinary() },
    searchAttributes: Object.values(SEARCH_ATTRIBUTES).map((key) => defineSearchAttributeKey(key.name, SearchAttributeType.KEYWORD)),
    extraArgs: ['--dynamic-config-value', 'frontend.enableServerVersionCheck=false'],
    log: { format: 'pretty', level: 'error' },
  },
});

/**
 * The history as protobuf JSON (enum names, 64-bit numbers as strings, bytes
 * in base64), read back by History.fromObject. Not the SDK's historyToJSON:
 * in this SDK release it checks the type against a second copy of protobufjs
 * and throws.
 */
function historyJson(history: proto.temporal.api.history.v1.IHistory): string {
  return JSON.stringify(proto.temporal.api.history.v1.History.fromObject(history).toJSON(), null, 1);
}

// Versioned workers, as the service runs them (WORKER_VERSIONING): the histories carry each workflow task's version and behaviour.
const version = { deploymentName: 'histories', buildId: bundleBuildId(readFileSync(bundlePath, 'utf8')) };
const versioned = { workerDeploymentOptions: { useWorkerVersioning: true as const, version, defaultVersioningBehavior: 'PINNED' as const } };

const ACTIVITY_NAMES = ['applyBatch', 'markBatchFailed', 'removeExpiredBatchBodies', 'runExport', 'markExportFailed', 'expireExports'] as const;
try {
  const recorded: Record<string, string> = {};
  for (const scenario of HISTORY_SCENARIOS) {
    const taskQueue = `histories-${randomUUID()}`;
    const activities = Object.fromEntries(
      ACTIVITY_NAMES.map((name) => [name, (scenario.activities[name] as ((...args: unknown[]) => Promise<unknown>) | undefined) ?? (async () => Promise.reject(new Error(`${scenario.name} did not expect ${name}`)))]),
    ) as unknown as Activities;
    const [workflowQueue, ...laneQueues] = scenarioTaskQueues(taskQueue);
    const workers = [
      await Worker.create({ connection: env.nativeConnection, taskQueue: workflowQueue!, workflowBundle: { codePath: bundlePath }, activities, maxHeartbeatThrottleInterval: 1000, ...versioned }),
      ...(await Promise.all(laneQueues.map((queue) => Worker.create({ connection: env.nativeConnection, taskQueue: queue, activities, maxHeartbeatThrottleInterval: 1000, ...versioned })))),
    ];
    const runs = workers.map((worker) => worker.run());
    try {
      await makeVersionCurrent(env.client, version, 'if-none');
      const workflowId = `${scenario.name}-${randomUUID()}`;
      const handle = await scenario.drive(env.client, workflowQueue!, workflowId);
      recorded[scenario.name] = historyJson(await handle.fetchHistory());
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('history recorded');
    } finally {
      for (const worker of workers) worker.shutdown();
      await Promise.all(runs);
    }
    process.stdout.write(`recorded ${scenario.name}\n`);
  }
  mkdirSync(outDir, { recursive: true });
  for (const [name, history] of Object.entries(recorded)) writeFileSync(join(outDir, `${name}.json`), `${history}\n`);
  process.stdout.write(`${Object.keys(recorded).length} histories in test/histories/${tag}/\n`);
} finally {
  await env.teardown();
  rmSync(scratch, { recursive: true, force: true });
}
