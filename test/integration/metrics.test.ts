// GET /metrics on the API, and the worker's own metrics server.
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { generatedMetricsTokenFile } from '../../api/metrics.ts';
import { createLogger } from '../../logger.ts';
import { createWorkerMetrics, serveMetrics } from '../../metrics/worker.ts';
import { freePort } from '../../scripts/lib/ports.ts';
import { createWorker, type ServiceWorker } from '../../worker/create-worker.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';
import { metricsAuthorization } from '../support/metrics-scrape.ts';
import { eventually } from '../support/poll.ts';

/** The value of one sample line (`name{labels} value`), 0 when the series does not exist yet. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  let harness: Harness;
  let connection: NativeConnection;
  let worker: ServiceWorker;
  let workerRun: Promise<void>;
  const workerMetrics = createWorkerMetrics();
  let workerMetricsUrl: string;
  let closeWorkerMetrics: () => void;
  const entityType = `T-${randomUUID()}`;

  beforeAll(async () => {
    // The harness's API with a worker of our own, built as worker/main.ts builds it with WORKER_METRICS_PORT set.
    harness = await startHarness({ worker: false });
    connection = await NativeConnection.connect({ address: harness.config.temporalAddress });
    worker = await createWorker({
      connection,
      client: harness.temporal,
      namespace: harness.config.TEMPORAL_NAMESPACE,
      taskQueue: harness.config.TEMPORAL_TASK_QUEUE,
      db: harness.db,
      log: createLogger('silent', 'test'),
      forceKeySecret: harness.config.forceKeySecret,
      exportDir: harness.config.exportDir,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      activityInterceptors: [workerMetrics.activityInterceptor],
    });
    workerRun = worker.run();
    const port = await freePort();
    const server = await serveMetrics(workerMetrics.registry, port, '127.0.0.1');
    workerMetricsUrl = `http://127.0.0.1:${port}/metrics`;
    closeWorkerMetrics = () => server.close();
  });

  afterAll(async () => {
    closeWorkerMetrics?.();
    worker?.shutdown();
    await workerRun;
    await connection?.close();
    await harness?.close();
  });

  async function scrape(): Promise<string> {
    const response = await harness.api('/metrics', { as: null, headers: metricsAuthorization(harness.config) });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  }

  async function runBatch(xml: string): Promise<string> {
    const submitted = await harness.api('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });
    expect(submitted.status, await submitted.clone().text()).toBe(200);
    const updateRequestId = (await submitted.json()) as string;
    const { status } = await batchEnded(harness, updateRequestId);
    // Read once as a client does: the route histogram below counts it.
    expect((await harness.api(`/api/v2/batches/${updateRequestId}/status`)).status).toBe(200);
    return status;
  }

  it('answers only a scraper with its token, without METRICS_TOKEN the one generated in DATA_DIR', async () => {
    expect(harness.config.METRICS_TOKEN).toBeUndefined();
    expect((await harness.api('/metrics', { as: null })).status).toBe(401);
    const file = generatedMetricsTokenFile(harness.config)!;
    expect(file).toBe(join(resolve(harness.config.DATA_DIR), 'secrets', 'metrics-token'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(file, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    for (const headers of [{}, { authorization: 'Bearer not-the-metrics-token' }, { authorization: `Basic ${token}` }]) {
      const refused = await harness.api('/metrics', { as: null, headers });
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="entity-records-metrics"');
      expect(await refused.text()).not.toContain('http_request_duration_seconds');
    }
    // An API token, even an admin's, is not the metrics token.
    expect((await harness.api('/metrics', { as: 'admin' })).status).toBe(401);
    expect((await harness.api('/metrics', { as: null, headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it('counts finished batches and their changes from the database, and times requests by route pattern', async () => {
    const before = await scrape();
    expect(await runBatch(batchXml([create('a', 'Měřený A', { entityType }), create('b', 'Měřený B', { entityType })]))).toBe('COMPLETED');
    expect(await runBatch(batchXml([update('x', 999_999_999, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])]))).toBe('FAILED');

    const after = await eventually(async () => {
      const text = await scrape();
      return sample(text, 'http_request_duration_seconds_count{route="/api/v2/batches",method="POST",status="200"}') >= 2
        ? text
        : undefined;
    });
    expect(sample(after, 'batches_total{outcome="COMPLETED"}')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'batches_total{outcome="COMPLETED"}') - sample(before, 'batches_total{outcome="COMPLETED"}')).toBe(1);
    expect(sample(after, 'batches_total{outcome="FAILED"}') - sample(before, 'batches_total{outcome="FAILED"}')).toBe(1);
    expect(sample(after, 'batch_changes_total') - sample(before, 'batch_changes_total')).toBe(2);
    expect(after).toContain('# TYPE http_request_duration_seconds histogram');
    expect(after).toMatch(
      /http_request_duration_seconds_bucket\{le="0\.1",route="\/api\/v2\/batches\/:updateRequestId\/status",method="GET",status="200"\} \d+/,
    );
    // Identifiers never become label values.
    expect(after).not.toMatch(/route="[^"]*[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('labels unknown paths "unmatched" and requests refused before routing with the route they asked for', async () => {
    expect((await harness.api(`/no/such/${randomUUID()}`)).status).toBe(404);
    expect((await harness.api('/api/v2/entities/12345', { as: null })).status).toBe(401);
    const text = await eventually(async () => {
      const scraped = await scrape();
      return scraped.includes('status="401"') ? scraped : undefined;
    });
    expect(sample(text, 'http_request_duration_seconds_count{route="unmatched",method="GET",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'http_request_duration_seconds_count{route="/api/v2/entities/:entityId",method="GET",status="401"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts completed exports and their bytes', async () => {
    const before = await scrape();
    const started = await harness.api('/api/v2/export/snapshots', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[1]',
    });
    expect(started.status, await started.clone().text()).toBe(200);
    const id = await started.text();
    const status = await eventually(async () => {
      const body = (await (await harness.api(`/api/v2/export/${id}/detail`)).json()) as { status: string; bytes: number };
      return body.status === 'COMPLETED' || body.status === 'FAILED' ? body : undefined;
    });
    expect(status.status).toBe('COMPLETED');
    const after = await scrape();
    expect(sample(after, 'exports_total{outcome="COMPLETED"}') - sample(before, 'exports_total{outcome="COMPLETED"}')).toBe(1);
    expect(sample(after, 'export_bytes_total') - sample(before, 'export_bytes_total')).toBe(status.bytes);
  });

  it("serves the worker's activity durations and process metrics on its own port", async () => {
    const response = await fetch(workerMetricsUrl);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(sample(text, 'activity_duration_seconds_count{activity="applyBatch",outcome="completed"}')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'activity_duration_seconds_count{activity="runExport",outcome="completed"}')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('process_resident_memory_bytes');
    expect((await fetch(workerMetricsUrl.replace('/metrics', '/other'))).status).toBe(404);
  });
});
