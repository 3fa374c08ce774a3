import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowReads, workflowReads } from '../../services/jobs/workflow-reads.ts';
import type { JobWorkflowState } from '../../temporal/client/job-workflow.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { Gate } from '../support/gate.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { eventually } from '../support/poll.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';

// Status reads of running jobs are cheap (one describe shared by the reads of
// a moment), a result is there as soon as the status says so, and a job's
// detail counts Temporal's attempts of its activity.

const running = (workflowId: string): JobWorkflowState => ({
  workflowId,
  runId: 'run',
  status: 'RUNNING',
  closed: false,
  cancelRequested: false,
  startTime: new Date(),
});

/** A WorkflowReads over a fake describe and clock: the describes it was asked for, and a way to answer them. */
function fakeReads(reuseMs: number) {
  let now = 0;
  const calls: Array<{ id: string; answer: (state: JobWorkflowState | undefined) => void; fail: (error: Error) => void }> = [];
  const describe = (_client: Client, id: string) =>
    new Promise<JobWorkflowState | undefined>((answer, fail) => {
      calls.push({ id, answer, fail });
    });
  // Each its own client: reachability (a failed describe quiets Temporal for a while) is per client.
  const reads = new WorkflowReads({} as Client, reuseMs, { now: () => now, describe });
  return { reads, calls, advance: (ms: number) => (now += ms) };
}

describe('workflow reads of running jobs', () => {
  it('shares one describe among the reads of a moment, reuses its answer for the interval, and renews it without making reads wait', async () => {
    const { reads, calls, advance } = fakeReads(500);
    const pending = Array.from({ length: 50 }, () => reads.read('job-1', { timeoutMs: 1000 }));
    expect(calls).toHaveLength(1);
    calls[0]!.answer(running('job-1'));
    const answers = await Promise.all(pending);
    expect(new Set(answers.map((answer) => answer?.state?.workflowId))).toEqual(new Set(['job-1']));
    expect(reads.counts).toEqual({ describe: 1, shared: 49, cached: 0, stale: 0 });

    advance(499);
    expect((await reads.read('job-1', { timeoutMs: 1000 }))?.state?.status).toBe('RUNNING');
    expect(calls).toHaveLength(1);
    // One interval old: served at once while one describe renews it.
    advance(1);
    expect((await reads.read('job-1', { timeoutMs: 1000 }))?.state?.status).toBe('RUNNING');
    expect((await reads.read('job-1', { timeoutMs: 1000 }))?.state?.status).toBe('RUNNING');
    expect(calls).toHaveLength(2);
    calls[1]!.answer(undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await reads.read('job-1', { timeoutMs: 1000 })).toEqual({ state: undefined });
    // Twice the interval old: never served; the read waits for a describe.
    advance(1000);
    const waiting = reads.read('job-1', { timeoutMs: 1000 });
    expect(calls).toHaveLength(3);
    calls[2]!.answer(running('job-1'));
    expect((await waiting)?.state?.status).toBe('RUNNING');
    expect(reads.counts).toEqual({ describe: 3, shared: 49, cached: 2, stale: 2 });
  });

  it('asks again when the read knows more than the kept answer (the row ended, the answer says the workflow runs)', async () => {
    const { reads, calls } = fakeReads(500);
    const first = reads.read('job-2', { timeoutMs: 1000 });
    calls[0]!.answer(running('job-2'));
    await first;
    const later = reads.read('job-2', { timeoutMs: 1000, usable: (state) => state === undefined || state.closed });
    expect(calls).toHaveLength(2);
    calls[1]!.answer({ ...running('job-2'), status: 'COMPLETED', closed: true });
    expect((await later)?.state?.status).toBe('COMPLETED');
  });

  it('keeps no failed answer, and after one asks Temporal no more for a while', async () => {
    const { reads, calls } = fakeReads(500);
    const first = reads.read('job-3', { timeoutMs: 1000 });
    calls[0]!.fail(new Error('unreachable'));
    expect(await first).toBeUndefined();
    expect(reads.size).toBe(0);
    expect(await reads.read('job-3', { timeoutMs: 1000 })).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  it('forgets expired answers: memory is bounded by the jobs read within the interval, not by all ever read', async () => {
    const { reads, calls, advance } = fakeReads(500);
    const many = Array.from({ length: 1000 }, (_, index) => reads.read(`job-${index}`, { timeoutMs: 1000 }));
    for (const call of calls) call.answer(running(call.id));
    await Promise.all(many);
    expect(reads.size).toBe(1000);
    advance(1000);
    const one = reads.read('another', { timeoutMs: 1000 });
    calls.at(-1)!.answer(undefined);
    await one;
    expect(reads.size).toBe(1);
  });

  it('with no reuse interval (0), still shares the describe in flight, and keeps nothing after it', async () => {
    const { reads, calls } = fakeReads(0);
    const both = [reads.read('job-4', { timeoutMs: 1000 }), reads.read('job-4', { timeoutMs: 1000 })];
    calls[0]!.answer(running('job-4'));
    await Promise.all(both);
    expect(reads.size).toBe(0);
    const next = reads.read('job-4', { timeoutMs: 1000 });
    expect(calls).toHaveLength(2);
    calls[1]!.answer(running('job-4'));
    await next;
  });
});

interface JobPlan {
  hold?: boolean;
  failFirst?: boolean;
}

describe('job status against the real service', () => {
  const entityType = `STATUS-${randomUUID()}`;
  const holds = new Gate();
  /** Jobs whose first activity attempt fails (after writing a step, inside its transaction). */
  const failFirstAttempt = new Set<string>();
  let harness: Harness;
  let seedIds: number[] = [];

  /** What happens to the next export: its id is made when it starts, so its plan is taken at its first step. */
  const nextExports: JobPlan[] = [];
  const seenExports = new Set<string>();

  const injected = (id: string, attempt: number) => {
    if (failFirstAttempt.has(id) && attempt === 1) throw new Error('injected fault in the first attempt');
  };
  const plan = (id: string, what: JobPlan) => {
    if (what.hold) holds.hold(id);
    if (what.failFirst) failFirstAttempt.add(id);
  };

  beforeAll(async () => {
    harness = await startHarness({
      exportRecordsPerStep: 1,
      afterWriteStep: async (id, _done, attempt) => {
        injected(id, attempt);
        await holds.pass(id);
      },
      afterExportStep: async (id, _written, attempt) => {
        if (!seenExports.has(id)) {
          seenExports.add(id);
          plan(id, nextExports.shift() ?? {});
        }
        injected(id, attempt);
        await holds.pass(id);
      },
    });
    const seed = await submit(batchXml([create('a', 'Jan Amos Komenský', { entityType }), create('b', 'Jan Hus', { entityType })]));
    expect((await batchEnded(harness, seed)).status).toBe('COMPLETED');
    const rows = await harness.sql<{ id: string }>('select id from entity where entity_type = $1 order by id', [entityType]);
    seedIds = rows.map((row) => Number(row.id));
  });
  afterAll(async () => {
    await harness?.close();
  });

  const reads = () => workflowReads(harness.temporal, harness.config.JOB_STATUS_CACHE_MS);

  async function submit(xml: string, options: JobPlan = {}): Promise<string> {
    const id = /uuid="([^"]+)"/.exec(xml)![1]!;
    plan(id, options);
    const response = await harness.api('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toBe(id);
    return id;
  }

  const batchOf = (name: string) => batchXml([create('n', name, { entityType })], { uuid: randomUUID() });

  const json = async (path: string) => {
    const response = await harness.api(path, { as: 'read' });
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  it('answers 50 concurrent status reads of a running batch with one describe, and a finished batch with none', async () => {
    const id = await submit(batchOf('Tomáš Štítný ze Štítného'), { hold: true });
    const release = await holds.reached(id);
    try {
      // Past any answer kept from before: the next reads need a describe of their own.
      await new Promise((resolve) => setTimeout(resolve, 2 * harness.config.JOB_STATUS_CACHE_MS + 50));
      const before = { ...reads().counts };
      const statuses = await Promise.all(Array.from({ length: 50 }, () => json(`/api/v2/batches/${id}/status`)));
      expect(statuses.every((status) => status.state === 'PROCESSING')).toBe(true);
      const describes = reads().counts.describe - before.describe;
      // One, or two should the reads straddle the end of an interval on a slow machine.
      expect(describes).toBeGreaterThanOrEqual(1);
      expect(describes).toBeLessThanOrEqual(2);
      const reused = (counts: typeof before) => counts.shared + counts.cached + counts.stale;
      // Every other read was answered without a describe of its own (a renewal in the background is a describe but no read).
      expect(reused(reads().counts) - reused(before)).toBeGreaterThanOrEqual(50 - describes);
      expect(reused(reads().counts) - reused(before)).toBeLessThanOrEqual(49);
    } finally {
      release();
    }
    expect((await batchEnded(harness, id)).status).toBe('COMPLETED');
    const before = reads().counts.describe;
    for (let index = 0; index < 20; index += 1)
      expect(await json(`/api/v2/batches/${id}/status`)).toEqual({ state: 'FINISHED', progress: 100 });
    expect((await harness.api(`/api/v2/batches/${id}/result`, { as: 'read' })).status).toBe(200);
    expect(reads().counts.describe).toBe(before);

    const metrics = await (await harness.api('/metrics', { as: null, headers: metricsAuthorization(harness.config) })).text();
    expect(metrics).toMatch(/^job_status_workflow_reads_total\{answer="describe"\} [1-9]/m);
  });

  it('serves the result (v2 and v1) the moment the status says FINISHED, for batches polled in tight loops', async () => {
    const written = Array.from({ length: 5 }, (_, index) => batchOf(`Poll ${index} ${randomUUID()}`));
    // Ends FINISHED with a failure document: the entity does not exist.
    const refused = Array.from({ length: 3 }, () =>
      batchXml([update('x', 999_999_990, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { uuid: randomUUID() }),
    );
    const ids = await Promise.all([...written, ...refused].map((xml) => submit(xml)));
    const seen: string[] = [];
    const pollUntilFinished = async (id: string) => {
      for (let polls = 1; ; polls += 1) {
        const status = await json(`/api/v2/batches/${id}/status`);
        if (status.state === 'PENDING' || status.state === 'PROCESSING') continue;
        expect(status).toEqual({ state: 'FINISHED', progress: 100 });
        const result = await harness.api(`/api/v2/batches/${id}/result`, { as: 'read' });
        const v1 = await harness.api(`/api/v1/batches/${id}/response`, { as: 'read' });
        seen.push(`${result.status}/${v1.status}`);
        expect(result.status, await result.clone().text()).toBe(200);
        expect(v1.status).toBe(200);
        return { polls, xml: await result.text() };
      }
    };
    // Three clients per batch, each polling without a pause.
    const outcomes = await Promise.all(ids.flatMap((id) => [pollUntilFinished(id), pollUntilFinished(id), pollUntilFinished(id)]));
    expect(seen).toHaveLength(ids.length * 3);
    expect(outcomes.filter((outcome) => outcome.xml.includes('batchChangeSuccess'))).toHaveLength(written.length * 3);
    expect(outcomes.filter((outcome) => outcome.xml.includes('batchChangeFailure'))).toHaveLength(refused.length * 3);
  });

  it('serves the result of a batch whose status says ERROR before the activity has recorded why (terminated workflow)', async () => {
    const id = await submit(batchOf('Petr Chelčický'), { hold: true });
    const release = await holds.reached(id);
    try {
      // This process now keeps the answer that the workflow runs.
      expect(await json(`/api/v2/batches/${id}/status`)).toMatchObject({ state: 'PROCESSING' });
      await harness.temporal.workflow.getHandle(id).terminate('test: an operator stops the batch');
      // Another API process's status may say ERROR at once: the result does not rest on the kept answer.
      const first = await harness.api(`/api/v2/batches/${id}/result`, { as: 'read' });
      expect(first.status).toBe(200);
      expect(await first.text()).toContain('terminated');
      const status = await eventually(async () => {
        const seen = await json(`/api/v2/batches/${id}/status`);
        return seen.state === 'ERROR' ? seen : undefined;
      });
      expect(status).toEqual({ state: 'ERROR', progress: 100 });
      // The activity still waits at its step: the row says PROCESSING.
      expect((await harness.db.batches.find(id))?.status).toBe('PROCESSING');
      const result = await harness.api(`/api/v2/batches/${id}/result`, { as: 'read' });
      expect(result.status).toBe(200);
      const xml = await result.text();
      expect(xml).toContain('batchChangeFailure');
      expect(xml).toContain('terminated');
      const v1 = await harness.api(`/api/v1/batches/${id}/response`, { as: 'read' });
      expect(v1.status).toBe(200);
      expect(await v1.text()).toContain('terminated');
    } finally {
      release();
    }
    expect((await batchEnded(harness, id)).status).toBe('FAILED');
  });

  it('answers the download of an export whose status says ERROR as FAILED, not as still running', async () => {
    const id = await startExport({ hold: true });
    const release = await holds.reached(id);
    try {
      await harness.temporal.workflow.getHandle(id).terminate('test: an operator stops the export');
      await eventually(async () => ((await json(`/api/v2/export/status/${id}`)).state === 'ERROR' ? true : undefined));
      expect((await harness.db.exports.find(id))?.status).toBe('RUNNING');
      const download = await harness.api(`/api/v2/export/download/${id}`, { as: 'export' });
      // A failed export has no file: 409 with the failure (docs/decisions/0030), never "still running, poll its status".
      const problem = (await download.json()) as { detail: string };
      expect(download.status).toBe(409);
      expect(problem.detail).toContain('FAILED');
    } finally {
      release();
    }
  });

  it("shows Temporal's attempt: the detail of a batch whose first activity attempt failed says attempt 2, running and ended", async () => {
    // The first attempt fails at its first step; the second is held at the same step.
    const id = await submit(batchOf('Jiří z Poděbrad'), { failFirst: true, hold: true });
    const release = await holds.reached(id);
    try {
      const running = await eventually(async () => {
        const detail = await json(`/api/v2/batches/${id}/detail`);
        return (detail.workflow as { attempt: number | null }).attempt === 2 ? detail : undefined;
      });
      expect(running).toMatchObject({ status: 'PROCESSING', source: 'workflow', attempt: 2, submissions: 1 });
      expect((running.workflow as { lastFailure: string | null }).lastFailure).toContain('injected fault');
    } finally {
      release();
    }
    expect((await batchEnded(harness, id)).status).toBe('COMPLETED');
    expect(await json(`/api/v2/batches/${id}/detail`)).toMatchObject({
      status: 'COMPLETED',
      source: 'database',
      attempt: 2,
      submissions: 1,
      workflow: { attempt: null },
    });
    // The workflow closes a moment after the row: the detail then shows it, not a kept answer that it runs.
    await eventually(
      async () => ((await json(`/api/v2/batches/${id}/detail`)).workflow as { status: string }).status === 'COMPLETED' || undefined,
    );
  });

  it('a batch that succeeded at once says attempt 1; an export whose first attempt failed says attempt 2', async () => {
    const batchId = await submit(batchOf('Karel IV.'));
    expect((await batchEnded(harness, batchId)).status).toBe('COMPLETED');
    expect(await json(`/api/v2/batches/${batchId}/detail`)).toMatchObject({ attempt: 1, submissions: 1 });

    const exportId = await startExport({ failFirst: true });
    await eventually(async () => ((await harness.db.exports.find(exportId))?.status === 'COMPLETED' ? true : undefined));
    expect(await json(`/api/v2/export/${exportId}/detail`)).toMatchObject({ status: 'COMPLETED', attempt: 2 });
  });

  /** Starts a snapshot export of the seed entities, planned as `options` say. */
  async function startExport(options: JobPlan = {}): Promise<string> {
    nextExports.push(options);
    const response = await harness.api('/api/v2/export/snapshots', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(seedIds),
      as: 'export',
    });
    expect(response.status).toBe(200);
    return response.text();
  }
});
