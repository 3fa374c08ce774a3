import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../logger.ts';
import { bodySource, submitBatch } from '../../services/batches/submission.ts';
import { startExport } from '../../services/exports/start.ts';
import { batchJobDetail, batchJobStatus, exportJobDetail, exportJobStatus } from '../../services/jobs/presenters.ts';
import { batchJobView, exportJobView } from '../../services/jobs/view.ts';
import { batchXml, create } from '../support/batches.ts';
import { Gate } from '../support/gate.ts';
import { startHarness, temporalCoreWarnings, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { eventually } from '../support/poll.ts';

// What an operator's actions in the Temporal UI do to a running batch or
// export, against the real dev server: cancel and terminate stop it with
// nothing written and the reason recorded; reset runs it again without
// applying it twice; and a job's status reads the workflow while it runs and
// the database when Temporal cannot be reached.

describe('operator actions on running jobs', () => {
  const entityType = `JOBS-${randomUUID()}`;
  const gate = new Gate();
  let harness: Harness;
  let seedIds: number[] = [];

  beforeAll(async () => {
    harness = await startHarness({
      exportRecordsPerStep: 1,
      afterWriteStep: (batchId) => gate.pass(batchId),
      afterExportStep: (exportId) => gate.passExport(exportId),
    });
    const seed = await submitAndWait(
      batchXml([create('a', 'Bohuslav Balbín', { entityType }), create('b', 'Gelasius Dobner', { entityType })]),
    );
    expect(seed.status).toBe('COMPLETED');
    const rows = await harness.sql<{ id: string }>('select id from entity where entity_type = $1 order by id', [entityType]);
    seedIds = rows.map((row) => Number(row.id));
  });
  afterAll(async () => {
    await harness?.close();
    // Terminated, cancelled and reset jobs end cleanly: the SDK has nothing to warn about ("Activity not found on completion").
    expect(temporalCoreWarnings()).toEqual([]);
  });

  const deps = () => ({ ...harness, log: createLogger('silent', 'test'), tokens: 'disabled' as const });
  /** GET a JSON resource of the API as a reader. */
  const read = async (path: string) => {
    const response = await harness.api(path, { as: 'read' });
    expect(response.status, path).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  async function submit(xml: string, held = false): Promise<string> {
    const id = /uuid="([^"]+)"/.exec(xml)?.[1] ?? randomUUID();
    if (held) gate.hold(id);
    const { batchId } = await submitBatch(deps(), {
      body: bodySource(Buffer.from(xml)),
      apiVersion: 'v2',
      principal: 'test-admin',
      force: false,
      mayForce: false,
    });
    expect(batchId).toBe(id);
    return batchId;
  }

  async function submitAndWait(xml: string) {
    return batchEnded(harness, await submit(xml));
  }

  const batchXmlOf = (...names: string[]) =>
    batchXml(
      names.map((name, index) => create(`l${index}`, name, { entityType })),
      { uuid: randomUUID() },
    );
  const written = async (batchId: string) =>
    Number((await harness.sql<{ n: string }>('select count(*) as n from revision where batch_id = $1', [batchId]))[0]!.n);
  const transactions = async (batchId: string) =>
    Number((await harness.sql<{ n: string }>('select count(*) as n from transaction where batch_id = $1', [batchId]))[0]!.n);
  /**
   * Every activity of the worker has ended. A stopped job's row and workflow
   * say so before its attempt has ended: the attempt waits for its heartbeat's
   * NotFound first. A test leaving it running would have it cut off by the
   * worker's shutdown, and its end reported to a server that answers NotFound.
   */
  const attemptsEnded = () => eventually(async () => (harness.worker!.activitiesInFlight() === 0 ? true : undefined));
  const closed = (workflowId: string) =>
    eventually(async () => {
      const { status } = await harness.temporal.workflow.getHandle(workflowId).describe();
      return status.name === 'RUNNING' ? undefined : status.name;
    });
  /** The stopped batch ended FAILED saying `why`, with no revision and no transaction, and its workflow closed as `workflowStatus`. */
  async function endedUnwritten(id: string, why: string, workflowStatus: string) {
    const row = await batchEnded(harness, id);
    expect(row).toMatchObject({ status: 'FAILED', result: null });
    expect(row.error).toContain(why);
    expect(await written(id)).toBe(0);
    expect(await transactions(id)).toBe(0);
    expect(await closed(id)).toBe(workflowStatus);
    return row;
  }

  it('shows a running batch as its workflow tells it: run id, attempt, progress, the UI address', async () => {
    const id = await submit(batchXmlOf('Václav Hájek z Libočan'), true);
    const release = await gate.reached(id);
    const detail = await eventually(async () => {
      const seen = await read(`/api/v2/batches/${id}/detail`);
      return (seen.workflow as { attempt: number | null }).attempt ? seen : undefined;
    });
    const { runId } = await harness.temporal.workflow.getHandle(id).describe();
    expect(detail).toMatchObject({ updateRequestId: id, status: 'PROCESSING', state: 'PROCESSING', source: 'workflow', error: null });
    expect(detail.workflow).toMatchObject({
      workflowId: id,
      runId,
      status: 'RUNNING',
      attempt: 1,
      lastFailure: null,
      worker: expect.stringContaining('@'),
    });
    expect((detail.workflow as { temporalUiUrl: string }).temporalUiUrl).toBe(
      `${harness.config.temporalUiUrl}/namespaces/default/workflows/${id}/${runId}/history`,
    );
    expect(await read(`/api/v2/batches/${id}/status`)).toEqual({ state: 'PROCESSING', progress: expect.any(Number) });
    release();
    expect((await batchEnded(harness, id)).status).toBe('COMPLETED');
    // The row is the answer from the commit on, even in the moment before the workflow records the activity's end.
    expect(await read(`/api/v2/batches/${id}/status`)).toEqual({ state: 'FINISHED', progress: 100 });
    expect(await closed(id)).toBe('COMPLETED');
    expect(await read(`/api/v2/batches/${id}/detail`)).toMatchObject({
      status: 'COMPLETED',
      source: 'database',
      workflow: { runId, status: 'COMPLETED', attempt: null },
    });
  });

  it('cancel: the batch rolls back, writes nothing, ends FAILED saying it was cancelled; the workflow is CANCELED', async () => {
    const id = await submit(batchXmlOf('Jan Blahoslav'), true);
    const release = await gate.reached(id);
    await harness.temporal.workflow.getHandle(id).cancel();
    // The heartbeat brings the cancel within a second or so; the check before the commit catches it either way.
    await eventually(async () =>
      (await harness.temporal.workflow.getHandle(id).describe()).raw.pendingActivities?.[0]?.state ===
      proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED
        ? true
        : undefined,
    );
    release();
    const row = await endedUnwritten(id, 'cancelled by an operator', 'CANCELLED');
    expect(await read(`/api/v2/batches/${id}/status`)).toEqual({ state: 'ERROR', progress: 100 });
    expect(await read(`/api/v2/batches/${id}/detail`)).toMatchObject({
      status: 'FAILED',
      error: row.error,
      workflow: { status: 'CANCELLED' },
    });
    expect(await (await harness.api(`/api/v2/batches/${id}/result`)).text()).toContain('cancelled by an operator');
  });

  it('terminate: the activity learns its workflow is gone, rolls back and records why; the batch is never committed', async () => {
    const id = await submit(batchXmlOf('Karel Škréta'), true);
    const release = await gate.reached(id);
    await harness.temporal.workflow.getHandle(id).terminate('test: an operator stops the batch');
    // Until the activity has recorded it, the status already tells the workflow's story.
    const meanwhile = await read(`/api/v2/batches/${id}/detail`);
    expect(meanwhile).toMatchObject({ status: 'FAILED', state: 'ERROR', source: 'workflow', workflow: { status: 'TERMINATED' } });
    expect(meanwhile.error).toContain('terminated');
    expect(await read(`/api/v2/batches/${id}/status`)).toEqual({ state: 'ERROR', progress: 100 });
    release();
    await endedUnwritten(id, 'terminated by an operator', 'TERMINATED');
    await attemptsEnded();
  });

  it('reset mid-run: the old run steps aside, the new run applies the batch once', async () => {
    const id = await submit(batchXmlOf('Adam Václav Michna'), true);
    const release = await gate.reached(id);
    const handle = harness.temporal.workflow.getHandle(id);
    const before = await handle.describe();
    const reset = await resetToFirstTask(id, before.runId);
    release();
    const row = await batchEnded(harness, id);
    expect(row.status).toBe('COMPLETED');
    expect(await written(id)).toBe(1);
    expect(await transactions(id)).toBe(1);
    const latest = await harness.temporal.workflow.getHandle(id).describe();
    expect(latest.runId).toBe(reset);
    expect(await closed(id)).toBe('COMPLETED');
    await attemptsEnded();
  });

  it('reset after the batch completed: the new run finds it applied and writes nothing again', async () => {
    const id = await submit(batchXmlOf('Jan Dismas Zelenka'));
    expect((await batchEnded(harness, id)).status).toBe('COMPLETED');
    expect(await closed(id)).toBe('COMPLETED');
    const first = await harness.temporal.workflow.getHandle(id).describe();
    const reset = await resetToFirstTask(id, first.runId);
    const outcome = await harness.temporal.workflow.getHandle(id, reset).result();
    expect(outcome).toEqual({ batchId: id, status: 'COMPLETED' });
    expect(await written(id)).toBe(1);
    expect(await transactions(id)).toBe(1);
  });

  it('cancel of a running export: the partial file is removed and the export ends FAILED saying why', async () => {
    const id = await startHeldExport();
    const release = await gate.reached(id);
    expect(readdirSync(harness.config.exportDir).some((name) => name.includes(id))).toBe(true);
    // Released at once: the check before the file counts finds the cancel, whether or not a heartbeat brought it.
    await harness.temporal.workflow.getHandle(id).cancel();
    release();
    const row = await exportEnded(id);
    expect(row).toMatchObject({ status: 'FAILED', sha256: null });
    expect(row.error).toContain('cancelled by an operator');
    expect(readdirSync(harness.config.exportDir).filter((name) => name.includes(id))).toEqual([]);
    expect(await closed(id)).toBe('CANCELLED');
    expect(await read(`/api/v2/export/status/${id}`)).toEqual({ state: 'ERROR', progress: 100 });
    expect(await read(`/api/v2/export/${id}/detail`)).toMatchObject({ status: 'FAILED', workflow: { status: 'CANCELLED' } });
  });

  it('terminate of a running export: no file is left and the export ends FAILED saying why', async () => {
    const id = await startHeldExport();
    const release = await gate.reached(id);
    await harness.temporal.workflow.getHandle(id).terminate('test: an operator stops the export');
    release();
    const row = await exportEnded(id);
    expect(row.status).toBe('FAILED');
    expect(row.error).toContain('terminated by an operator');
    expect(readdirSync(harness.config.exportDir).filter((name) => name.includes(id))).toEqual([]);
    expect(await closed(id)).toBe('TERMINATED');
    await attemptsEnded();
  });

  it('an export workflow closes as soon as its file is ready', async () => {
    const { id } = await startExport(deps(), { kind: 'snapshot', requestedIds: seedIds.map(String), principal: 'test-exporter' });
    expect(await closed(id)).toBe('COMPLETED');
    expect(await harness.temporal.workflow.getHandle(id).result()).toMatchObject({
      exportId: id,
      status: 'COMPLETED',
      entitiesWritten: seedIds.length,
    });
    expect(await read(`/api/v2/export/status/${id}`)).toEqual({ state: 'FINISHED', progress: 100 });
  });

  it('answers the status of a running batch and export from the database while Temporal cannot be reached', async () => {
    const id = await submit(batchXmlOf('Bohuslav Matěj Černohorský'), true);
    const release = await gate.reached(id);
    const exportId = await startHeldExport();
    const releaseExport = await gate.reached(exportId);
    // No retry interceptor: its timers would outlive the connection this test closes.
    const unreachable = new Client({ connection: Connection.lazy({ address: '127.0.0.1:9', connectTimeout: 500, interceptors: [] }) });
    try {
      const down = { ...harness, temporal: unreachable };
      const batch = (await batchJobView(down, id, { detail: true }))!;
      expect(batchJobDetail(batch)).toMatchObject({
        status: 'PROCESSING',
        state: 'PROCESSING',
        source: 'database',
        workflow: { runId: null, attempt: null },
      });
      expect(batchJobStatus(batch)).toEqual({ state: 'PROCESSING', progress: expect.any(Number) });
      const exported = (await exportJobView(down, exportId, { detail: true }))!;
      expect(exportJobDetail(exported)).toMatchObject({ status: 'RUNNING', state: 'PROCESSING', source: 'database' });
      expect(exportJobStatus(exported).state).toBe('PROCESSING');
    } finally {
      release();
      releaseExport();
      await unreachable.connection.close().catch(() => undefined);
    }
    expect((await batchEnded(harness, id)).status).toBe('COMPLETED');
    expect((await exportEnded(exportId)).status).toBe('COMPLETED');
  });

  async function startHeldExport(): Promise<string> {
    gate.holdNextExport();
    return (await startExport(deps(), { kind: 'snapshot', requestedIds: seedIds.map(String), principal: 'test-exporter' })).id;
  }

  const exportEnded = (id: string) =>
    eventually(async () => {
      const row = await harness.db.exports.find(id);
      return row?.status === 'COMPLETED' || row?.status === 'FAILED' ? row : undefined;
    });

  /** Resets a workflow to its first workflow task, as the UI's Reset does; returns the new run's id. */
  async function resetToFirstTask(workflowId: string, runId: string): Promise<string> {
    const history = await harness.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
    const firstTaskCompleted = history.events?.find((event) => event.workflowTaskCompletedEventAttributes)?.eventId;
    const { runId: newRunId } = await harness.temporal.workflowService.resetWorkflowExecution({
      namespace: harness.config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId, runId },
      reason: 'test: an operator resets the workflow',
      workflowTaskFinishEventId: firstTaskCompleted,
      requestId: randomUUID(),
    });
    return newRunId!;
  }
});
