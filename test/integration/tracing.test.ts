import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { startTracing } from '../../metrics/tracing.ts';
import { eventually } from '../support/poll.ts';

// OpenTelemetry tracing as an operator switches it on: an OTLP/HTTP collector
// named by OTEL_EXPORTER_OTLP_ENDPOINT receives a span for every activity
// execution; with no endpoint, nothing is set up.
describe('OpenTelemetry tracing', () => {
  it('is off without an endpoint', () => {
    expect(startTracing(undefined, 'test')).toBeUndefined();
  });

  it('sends a span of each activity execution to the collector', async () => {
    const received: Array<{ path: string; bytes: number }> = [];
    const collector = createServer((request, response) => {
      let bytes = 0;
      request.on('data', (chunk: Buffer) => (bytes += chunk.length));
      request.on('end', () => {
        received.push({ path: request.url ?? '', bytes });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    }).listen(0, '127.0.0.1');
    await once(collector, 'listening');
    try {
      const tracing = startTracing(`http://127.0.0.1:${(collector.address() as AddressInfo).port}`, 'entity-records-test')!;
      const env = new MockActivityEnvironment({ activityType: 'applyBatch' }, { interceptors: [tracing.activityInterceptor] });
      expect(await env.run(async () => 'COMPLETED')).toBe('COMPLETED');
      await tracing.shutdown();
      await eventually(async () => (received.length > 0 ? true : undefined), 10_000);
      expect(received[0]!.path).toBe('/v1/traces');
      expect(received[0]!.bytes).toBeGreaterThan(0);
    } finally {
      collector.close();
    }
  });
});
