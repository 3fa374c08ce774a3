import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { buildApp } from '../../api/app.ts';
import { createLogger } from '../../logger.ts';
import { repairStrandedJobs } from '../../services/batches/recovery.ts';
import { batchXml, create } from '../support/batches.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';

describe('foundation: API → Temporal → worker → PostgreSQL', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('reports both dependencies up on /health', async () => {
    const response = await fetch(`${harness.baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', database: 'up', temporal: 'up' });
  });

  it('stores a submitted batch and runs its workflow, whose activity updates the row', async () => {
    const response = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', 'Karel Havlíček')]),
    });
    expect(response.status).toBe(200);
    const updateRequestId = (await response.json()) as string;
    expect(response.headers.get('location')).toBe(`/api/v2/batches/${updateRequestId}/detail`);

    const description = await harness.temporal.workflow.getHandle(updateRequestId).describe();
    expect(description.workflowId).toBe(updateRequestId);
    expect(description.taskQueue).toBe(harness.config.TEMPORAL_TASK_QUEUE);

    expect((await batchEnded(harness, updateRequestId)).status).toBe('COMPLETED');
  });

  it('while Temporal does not answer: health says so, a v2 batch is kept ACCEPTED for the sweep, a v1 batch is refused with nothing kept', async () => {
    const unreachable = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 }) });
    const app = buildApp({
      config: harness.config,
      db: harness.db,
      temporal: unreachable,
      log: createLogger('silent', 'test'),
      tokens: 'disabled',
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    try {
      const response = await fetch(url('/health'));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'degraded', database: 'up', temporal: 'down' });

      // v2: answered as usual; the row is the outbox the recovery sweep starts from.
      const v2 = await fetch(url('/api/v2/batches'), {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('a', 'Jan Žižka')]),
      });
      expect(v2.status).toBe(200);
      const batchId = (await v2.json()) as string;
      expect(await harness.sql('select status, error from batch where id = $1', [batchId])).toEqual([{ status: 'ACCEPTED', error: null }]);

      // v1: synchronous, and its client sends a refused save again under a new id: refused, nothing kept.
      const v1Id = randomUUID();
      const v1Xml = batchXml([create('a', 'Prokop Holý')], { uuid: v1Id, version: 'v1' });
      const v1 = await fetch(url('/api/v1/batches'), { method: 'POST', headers: { 'content-type': 'text/xml' }, body: v1Xml });
      const v1Body = await v1.text();
      expect(v1.status, v1Body).toBe(503);
      expect(v1Body).toContain('send it again later');
      expect(await harness.sql('select id from batch where id = $1', [v1Id])).toEqual([]);

      // Once Temporal answers, the sweep starts the kept batch's workflow, and the worker applies it.
      await repairStrandedJobs({ config: harness.config, temporal: harness.temporal, db: harness.db }, 0);
      expect((await batchEnded(harness, batchId)).status).toBe('COMPLETED');
    } finally {
      server.close();
    }
  });
});
