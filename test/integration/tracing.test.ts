import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDb, type Db } from '../../db/index.ts';
import { startTracing, UNTRACED_WORKFLOW_SINKS } from '../../metrics/tracing.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { EntryProcesses, entryEnv } from '../support/entry-points.ts';
import { eventually } from '../support/poll.ts';

// OpenTelemetry tracing as an operator switches it on: an OTLP/HTTP collector
// named by OTEL_EXPORTER_OTLP_ENDPOINT receives the spans of the API's
// requests, of the workflow starts made in them, of the workflows' runs and
// of their activities, one trace per request; with no endpoint, nothing is
// set up.

/** One span as the collector received it (OTLP/HTTP JSON, the exporter's encoding). */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: { key: string; value: OtlpValue }[];
      }[];
    }[];
  }[];
}

const valueOf = (value: OtlpValue) => value.stringValue ?? Number(value.intValue);
const attributesOf = (list: { key: string; value: OtlpValue }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));
const SERVER = 2;
const quiet = () => undefined;

/** A local collector of OTLP/HTTP JSON: every span it received, with its service's name. */
async function startCollector(): Promise<{ url: string; requests: string[]; spans: ReceivedSpan[]; server: Server }> {
  const requests: string[] = [];
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push(`${request.url} ${request.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              service,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, spans, server };
}

describe('OpenTelemetry tracing', () => {
  const processes = new EntryProcesses();
  let db: Db | undefined;
  let collector: Awaited<ReturnType<typeof startCollector>> | undefined;
  beforeAll(() => {
    // The replay's worker states its start and stop at info: errors only.
    Runtime.install({
      logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: (message: string) => console.error(message) },
    });
  });
  afterAll(async () => {
    processes.killAll();
    collector?.server.close();
    await db?.close();
  });

  it('is off without an endpoint', async () => {
    expect(await startTracing(undefined, 'test')).toBeUndefined();
  });

  it('sends a span of each activity execution to the collector', async () => {
    const local = await startCollector();
    try {
      const tracing = (await startTracing(local.url, 'entity-records-test'))!;
      const env = new MockActivityEnvironment({ activityType: 'applyBatch' }, { interceptors: [tracing.activityInterceptor] });
      expect(await env.run(async () => 'COMPLETED')).toBe('COMPLETED');
      await tracing.shutdown();
      await eventually(async () => (local.spans.length > 0 ? true : undefined), 10_000);
      expect(local.requests[0]).toBe('/v1/traces application/json');
      expect(local.spans.map((span) => span.name)).toEqual(['RunActivity:applyBatch']);
    } finally {
      local.server.close();
    }
  });

  it('traces a batch from its request through the workflow start, the workflow and its activity, all in one trace', async () => {
    collector = await startCollector();
    const env = { ...(await entryEnv()), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    const api = processes.start('api/main.ts', env);
    const worker = processes.start('worker/main.ts', env);
    db = await openDb(inject('databaseUrl'));
    const remote = await processes.healthyApi(env, [api, worker], db);
    const applied = await applyBatch(remote, batchXml([create('a', 'Josef Jungmann', { entityType: `TRACED-${randomUUID()}` })]));
    // The hottest read, answered before Koa (api/reads/entity-get.ts): a span all the same.
    expect((await remote.api(`/api/v2/entities/${applied.revisions.get('a')!.entityId}`)).status).toBe(200);
    // The batch's row is written by its activity; the workflow's own spans end when the workflow does.
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const handle = new Client({ connection }).workflow.getHandle(applied.batchId);
      await handle.result();
      // A traced history replays against the bundle as an untraced one does (test/integration/replay.test.ts): the choice is in the history.
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') }, sinks: UNTRACED_WORKFLOW_SINKS },
        await handle.fetchHistory(),
        applied.batchId,
      );
    } finally {
      await connection.close();
    }
    // A stop sends what is left.
    const exits = [api, worker].map((child) => once(child, 'exit'));
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    expect(
      (await Promise.all(exits)).map(([code]) => code),
      processes.output.join(''),
    ).toEqual([0, 0]);

    const { spans } = collector;
    const submit = await eventually(async () => spans.find((span) => span.name === 'POST /api/v2/batches'), 10_000);
    expect(submit).toMatchObject({
      service: 'entity-records-api',
      kind: SERVER,
      attributes: { 'http.request.method': 'POST', 'http.route': '/api/v2/batches', 'http.response.status_code': 200 },
    });
    const trace = spans.filter((span) => span.traceId === submit.traceId);
    const childOf = (parent: ReceivedSpan, name: string) => {
      const child = trace.find((span) => span.name === name && span.parentSpanId === parent.spanId);
      expect(
        child,
        `${name} under ${parent.name} in ${JSON.stringify(trace.map(({ name: n, spanId, parentSpanId }) => ({ n, spanId, parentSpanId })))}`,
      ).toBeDefined();
      return child!;
    };
    const start = childOf(submit, 'StartWorkflow:batchWorkflow');
    expect(start).toMatchObject({ service: 'entity-records-api', attributes: { temporalWorkflowId: applied.batchId } });
    const run = childOf(start, 'RunWorkflow:batchWorkflow');
    expect(run.service).toBe('entity-records-worker');
    const schedule = childOf(run, 'StartActivity:applyBatch');
    expect(childOf(schedule, 'RunActivity:applyBatch').service).toBe('entity-records-worker');

    // The read of the result and the direct GET: server spans of their own traces, named by route pattern.
    expect(
      spans.some(
        (span) => span.name === 'GET /api/v2/batches/:updateRequestId/result' && span.kind === SERVER && span.traceId !== submit.traceId,
      ),
    ).toBe(true);
    expect(spans.find((span) => span.name === 'GET /api/v2/entities/:entityId')).toMatchObject({
      kind: SERVER,
      attributes: { 'http.route': '/api/v2/entities/:entityId', 'http.response.status_code': 200 },
    });
  });
});
