import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode, Runtime, Worker, type ReplayResult } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { recordedHistories, workflowTypeOf, type RecordedHistory } from '../histories/histories.ts';

// Every recorded workflow history (test/histories/, append-only) replayed
// against the workflow bundle the workers run now: a change to workflows/
// that would fail running workflows with a non-determinism error fails here.
// The negative control (one command more) proves the replay can fail.

const quiet = () => undefined;

async function replay(bundlePath: string, histories: RecordedHistory[]): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: bundlePath }, replayName: 'replay-test' }, histories)) results.push(result);
  return results;
}

describe('recorded workflow histories replay against the current bundle', () => {
  const histories = recordedHistories();
  beforeAll(() => {
    if (!Runtime._instance) Runtime.install({ logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (m: string) => console.error(m) }, telemetryOptions: { logging: { forward: {} } } });
    // The negative control's failed workflow tasks are the core's warnings: expected, so not printed.
  });

  it('has histories of every job workflow, closed and cut mid-activity', () => {
    expect(new Set(histories.map(workflowTypeOf))).toEqual(new Set(['batchWorkflow', 'exportWorkflow', 'expiryWorkflow']));
    expect(histories.some((history) => history.file.includes('open-mid'))).toBe(true);
  });

  it('every one replays without a determinism error', async () => {
    const results = await replay(inject('workflowBundlePath'), histories);
    expect(results).toHaveLength(histories.length);
    expect(results.filter((result) => result.error).map((result) => `${result.workflowId}: ${result.error?.message}`)).toEqual([]);
  });

  it('negative control: a bundle with one command more fails every batch history with a determinism error', async () => {
    const bundlePath = join(mkdtempSync(join(tmpdir(), 'replay-control-')), 'bundle.js');
    const { code } = await bundleWorkflowCode({
      workflowsPath: new URL('../histories/negative-control/workflows.ts', import.meta.url).pathname,
      logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
    });
    writeFileSync(bundlePath, code);
    const batchHistories = histories.filter((history) => workflowTypeOf(history) === 'batchWorkflow');
    const results = await replay(bundlePath, batchHistories);
    expect(results).toHaveLength(batchHistories.length);
    for (const result of results) expect(result.error, result.workflowId).toBeInstanceOf(DeterminismViolationError);
  });
});
