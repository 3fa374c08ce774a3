import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { buildApp } from '../../api/app.ts';
import { createLogger } from '../../logger.ts';
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

  it('answers 503 naming Temporal when it does not answer', async () => {
    const unreachable = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 }) });
    const app = buildApp({ config: harness.config, db: harness.db, temporal: unreachable, log: createLogger('silent', 'test'), tokens: 'disabled' });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/health`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ status: 'degraded', database: 'up', temporal: 'down' });

      // A batch is refused with what to do next: the detail is shown and Retry-After set.
      const batch = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('a', 'Jan Žižka')]),
      });
      expect(batch.status).toBe(503);
      expect(batch.headers.get('retry-after')).toBe('5');
      expect(await batch.json()).toMatchObject({ code: 'ServiceUnavailable', detail: expect.stringContaining('send it again later') });
    } finally {
      server.close();
    }
  });
});
