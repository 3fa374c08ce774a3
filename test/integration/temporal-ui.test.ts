import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILED_JOBS_QUERY, workflowListUiUrl } from '../../temporal/client/job-workflow.ts';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

// What an operator finds in the Temporal UI: a memo on every batch and export
// workflow, and search attributes to list them by submitter, kind and outcome.
describe('workflows as the Temporal UI shows them', () => {
  const entityType = `UI-${randomUUID()}`;
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  async function submit(xml: string, as: 'write' | 'admin'): Promise<string> {
    const response = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: xml,
      as,
    });
    expect(response.status).toBe(200);
    return (await response.json()) as string;
  }

  /** Each listed workflow's status and its Outcome and Submitter, as the list answers them. */
  async function listedAttributes(query: string): Promise<Map<string, { status: string; Outcome: unknown; Submitter: unknown }>> {
    const rows = new Map<string, { status: string; Outcome: unknown; Submitter: unknown }>();
    for await (const workflow of harness.temporal.workflow.list({ query })) {
      const attributes = workflow.typedSearchAttributes;
      rows.set(workflow.workflowId, {
        status: workflow.status.name,
        Outcome: attributes.get(SEARCH_ATTRIBUTES.outcome),
        Submitter: attributes.get(SEARCH_ATTRIBUTES.submitter),
      });
    }
    return rows;
  }

  async function listed(query: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const workflow of harness.temporal.workflow.list({ query })) ids.push(workflow.workflowId);
    return ids;
  }

  it('gives a batch workflow a memo and lists it by submitter, API version and outcome', async () => {
    const xml = batchXml([create('a', 'Ema Destinnová', { entityType })]);
    const completed = await submit(xml, 'write');
    const described = await eventually(async () => {
      const description = await harness.temporal.workflow.getHandle(completed).describe();
      return description.status.name === 'COMPLETED' ? description : undefined;
    });
    // The same name again: PreferredNameExists stops the batch, and its workflow still completes.
    const failed = await submit(batchXml([create('a', 'Ema Destinnová', { entityType })]), 'admin');
    expect(await described.memo).toEqual({
      submitter: 'test-writer',
      apiVersion: 'v2',
      bytes: Buffer.byteLength(xml),
      changes: 1,
      lane: 'interactive',
    });
    expect(described.typedSearchAttributes.getAll().map(({ key, value }) => [key.name, value])).toEqual(
      expect.arrayContaining([
        ['Submitter', 'test-writer'],
        ['RequestKind', 'v2'],
        ['Outcome', 'COMPLETED'],
      ]),
    );

    // Visibility lags a moment behind the workflow.
    await eventually(async () =>
      (await listed(`Submitter = "test-writer" AND Outcome = "COMPLETED" AND RequestKind = "v2"`)).includes(completed) ? true : undefined,
    );
    await eventually(async () => ((await listed(`Submitter = "test-admin" AND Outcome = "FAILED"`)).includes(failed) ? true : undefined));
    expect(await listed(`Submitter = "test-writer" AND Outcome = "FAILED"`)).not.toContain(completed);

    // What the list itself (ListWorkflowExecutions) carries for each: both closed COMPLETED, told apart by Outcome.
    const rows = await listedAttributes(`WorkflowId IN ("${completed}", "${failed}")`);
    expect(rows.get(completed)).toEqual({ status: 'COMPLETED', Outcome: 'COMPLETED', Submitter: 'test-writer' });
    expect(rows.get(failed)).toEqual({ status: 'COMPLETED', Outcome: 'FAILED', Submitter: 'test-admin' });
  });

  it('prints the list of failed jobs as a Temporal UI address carrying the query', () => {
    const url = new URL(workflowListUiUrl('http://127.0.0.1:8233/', 'default', FAILED_JOBS_QUERY));
    expect(url.pathname).toBe('/namespaces/default/workflows');
    expect(url.searchParams.get('query')).toBe(FAILED_JOBS_QUERY);
  });

  it('gives an export workflow a memo and lists it by submitter, kind and outcome', async () => {
    const response = await harness.api('/api/v2/export/snapshots', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[1, 2]',
      as: 'export',
    });
    expect(response.status).toBe(200);
    const id = await response.text();
    const described = await harness.temporal.workflow.getHandle(id).describe();
    expect(await described.memo).toEqual({ submitter: 'test-exporter', kind: 'snapshot', requestedIds: 2 });
    await eventually(async () =>
      (await listed(`Submitter = "test-exporter" AND RequestKind = "snapshot" AND Outcome = "COMPLETED"`)).includes(id) ? true : undefined,
    );
  });

  it("lists every job that did not succeed with the README's saved query for failures", async () => {
    // A batch its rules stopped (its workflow COMPLETED, Outcome=FAILED) and one an operator terminated.
    const failedBatch = await submit(batchXml([create('a', 'Ema Destinnová', { entityType })]), 'admin');
    await eventually(async () =>
      (await harness.temporal.workflow.getHandle(failedBatch).describe()).status.name === 'COMPLETED' ? true : undefined,
    );
    const stopped = randomUUID();
    await harness.temporal.workflow.start('batchWorkflow', {
      taskQueue: `nobody-${stopped}`,
      workflowId: stopped,
      args: [{ batchId: stopped }],
    });
    await harness.temporal.workflow.getHandle(stopped).terminate('test: an operator stops it');

    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const query = /saved query for failures[^`]*`([^`]+)`/.exec(readme)?.[1];
    expect(query, 'the README names the saved query for failures, the one npm start links to').toBe(FAILED_JOBS_QUERY);
    await eventually(async () => {
      const ids = await listed(query!);
      return ids.includes(failedBatch) && ids.includes(stopped) ? true : undefined;
    });
  });
});
