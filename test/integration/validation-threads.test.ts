// Uploads are validated in worker threads (engine/validation/pool.ts): while
// a large upload is validated, the API process's event loop goes on
// answering GETs; a document's errors come back from the thread as they were
// found; a thread that dies fails the uploads it held, and only those, and
// the API goes on serving.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.ts';
import { generateCreates } from '../../bench/lib/generate.ts';
import { InvalidXmlError, SchemaViolationError } from '../../domain/errors.ts';
import { writeBatch } from '../../domain/xml/index.ts';
import { BatchValidator, ValidationPool, validateBatchXml, type BatchValidators } from '../../engine/validation/index.ts';
import { createLogger } from '../../logger.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { chunkedPost, type ChunkedPost } from '../support/chunked-post.ts';
import { CRASH_MARKER, crashingThreadEntry } from '../support/validation-crash.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

const TYPE = `T-${randomUUID()}`;
const MIB = 1024 * 1024;
/** About 33 MB: some 16 slices of 2 MiB. */
const LARGE_ENTITIES = 20_000;
/**
 * GETs answered while one push of the upload waited for its validation.
 * On the event loop a push holds the loop for its slice and yields once
 * after it: a sequential GET (request, query, answer: several turns of the
 * loop) completes at most once in that time. In a thread, the loop is free
 * for as long as the slice takes.
 */
const GETS_DURING_ONE_PUSH = 5;

/** A generated v2 batch in 64 KiB pieces. */
async function generatedBatch(entities: number, seed: number): Promise<{ uuid: string; pieces: Buffer[] }> {
  const uuid = randomUUID();
  const header = { version: 'v2' as const, batchUuid: uuid, sender: { id: 'u-1', name: 'Jana Nováková' } };
  const commands = generateCreates(entities, { seed, localIdPrefix: `v${seed}e`, entityType: `${TYPE}-${seed}` });
  const pieces: Buffer[] = [];
  let pending = '';
  for await (const text of writeBatch(header, commands, 'v2')) {
    pending += text;
    if (pending.length < 64 * 1024) continue;
    pieces.push(Buffer.from(pending));
    pending = '';
  }
  pieces.push(Buffer.from(pending));
  return { uuid, pieces };
}

function post(baseUrl: string): ChunkedPost {
  return chunkedPost(new URL('/api/v2/batches', baseUrl), {
    'content-type': 'application/xml',
    authorization: `Bearer ${TEST_TOKENS.admin}`,
  });
}

/** Counts the GETs answered while each push (and the end) of an upload waited for its validator. */
function watched(inner: BatchValidators, answered: () => number, perPush: number[]): BatchValidators {
  const waiting = async <T>(work: Promise<T>): Promise<T> => {
    const before = answered();
    try {
      return await work;
    } finally {
      perPush.push(answered() - before);
    }
  };
  return {
    open() {
      const validator = inner.open();
      return {
        push: (chunk) => waiting(validator.push(chunk)),
        end: () => waiting(validator.end()),
        close: () => validator.close(),
        get version() {
          return validator.version;
        },
        get hasSchemaErrors() {
          return validator.hasSchemaErrors;
        },
        get changesSoFar() {
          return validator.changesSoFar;
        },
      };
    },
  };
}

describe('uploads validated in validation threads', () => {
  let harness: Harness;
  let entityId: number;
  const getRecord = () => harness.api(`/api/v2/entities/${entityId}`, { as: 'read' });
  const count = async (sql: string) => Number((await harness.sql<{ n: string }>(sql))[0]!.n);
  /** Uploads whose body is being stored: one whose validator is open in a thread. */
  const openUploads = () =>
    count(
      `select count(*) as n from pg_stat_activity where datname = current_database() and query ilike 'copy batch_body_chunk%' and state <> 'idle'`,
    );

  beforeAll(async () => {
    harness = await startHarness({
      env: { VALIDATION_THREADS: '2', UPLOAD_MAX_CONCURRENT: '3' },
      validationThreadEntry: crashingThreadEntry,
    });
    const applied = await applyBatch(harness, batchXml([create('seed', 'Nováková, Jana', { entityType: TYPE })]));
    entityId = applied.revisions.get('seed')!.entityId;
  });
  afterAll(async () => {
    await harness?.close();
  });

  /**
   * The large upload goes to an app of its own, on the harness's database,
   * whose validators are watched, and whose task queue no worker polls (the
   * batch is accepted, not applied).
   */
  async function uploadBesideGets(validators: (answered: () => number, perPush: number[]) => BatchValidators) {
    const { uuid, pieces } = await generatedBatch(LARGE_ENTITIES, 7);
    let answered = 0;
    const perPush: number[] = [];
    const validation = validators(() => answered, perPush);
    // The engine is loaded (schemas read, wasm compiled) before the measure: that wait is no validation.
    const warm = validation.open();
    await warm.push(Buffer.from(batchXml([create('w', 'Warm', { entityType: TYPE })])));
    await warm.end();
    perPush.length = 0;
    const config = { ...harness.config, TEMPORAL_TASK_QUEUE: `unpolled-${randomUUID()}` };
    const server = buildApp({
      config,
      db: harness.db,
      temporal: harness.temporal,
      log: createLogger('silent', 'test'),
      tokens: 'disabled',
      validation,
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const upload = post(baseUrl);
      let uploading = true;
      const statuses = new Set<number>();
      const gets = (async () => {
        while (uploading) {
          const response = await fetch(`${baseUrl}/api/v2/entities/${entityId}`);
          await response.arrayBuffer();
          statuses.add(response.status);
          answered += 1;
        }
      })();
      for (const piece of pieces.slice(0, -1)) await upload.write(piece);
      upload.request.end(pieces.at(-1));
      const sent = await upload.answered.finally(() => (uploading = false));
      await gets;
      return { sent, uuid, bytes: pieces.reduce((sum, piece) => sum + piece.length, 0), answered, perPush, statuses };
    } finally {
      server.close();
      server.closeAllConnections();
      await harness.temporal.workflow
        .getHandle(uuid)
        .terminate()
        .catch(() => undefined);
    }
  }

  it('answers GETs of a record while a large upload is validated', { timeout: 180_000 }, async () => {
    const pool = new ValidationPool({ threads: 1 });
    try {
      const outcome = await uploadBesideGets((answered, perPush) => watched(pool, answered, perPush));
      expect(outcome.sent.status, outcome.sent.answer).toBe(200);
      expect(JSON.parse(outcome.sent.answer)).toBe(outcome.uuid);
      expect(outcome.bytes).toBeGreaterThan(20 * MIB);
      expect([...outcome.statuses]).toEqual([200]);
      expect(Math.max(...outcome.perPush)).toBeGreaterThanOrEqual(GETS_DURING_ONE_PUSH);
    } finally {
      await pool.close();
    }
  });

  it('counts no such GETs when the same upload is validated on the event loop (the measure can fail)', { timeout: 180_000 }, async () => {
    const outcome = await uploadBesideGets((answered, perPush) => watched({ open: () => new BatchValidator() }, answered, perPush));
    expect(outcome.sent.status, outcome.sent.answer).toBe(200);
    expect([...outcome.statuses]).toEqual([200]);
    expect(Math.max(...outcome.perPush)).toBeLessThan(GETS_DURING_ONE_PUSH);
  });

  it('answers a document’s errors, with their lines and columns, as they are found on this thread', async () => {
    const schemaErrors = batchXml([
      create('a', 'Alfa'),
      create('b', 'Beta', { entityType: '' }),
      create('c', 'Gama'),
      create('d', 'Delta', { entityType: '' }),
    ]).replaceAll('<createEntity', '\n<createEntity');
    const malformed = batchXml([create('a', 'Alfa'), create('b', 'Beta')])
      .replaceAll('<createEntity', '\n<createEntity')
      .replace('</createEntity>', '</createEntiti>');
    for (const [xml, code, ErrorClass] of [
      [schemaErrors, 'SchemaViolation', SchemaViolationError],
      [malformed, 'InvalidXml', InvalidXmlError],
    ] as const) {
      const expected = await validateBatchXml(Buffer.from(xml)).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(expected).toBeInstanceOf(ErrorClass);
      const response = await harness.api('/api/v2/batches', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: xml });
      expect(response.status).toBe(400);
      const problem = (await response.json()) as {
        code: string;
        detail: string;
        errors: { line: number; column: number; message: string }[];
      };
      expect(problem.code).toBe(code);
      expect(problem.detail).toBe((expected as Error).message);
      expect(problem.errors).toEqual((expected as SchemaViolationError | InvalidXmlError).problems);
    }
    const lineOf = (localId: string) => schemaErrors.split('\n').findIndex((line) => line.includes(`localId="${localId}"`)) + 1;
    const response = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: schemaErrors,
    });
    const { errors } = (await response.json()) as { errors: { line: number; column: number; message: string }[] };
    expect(errors.map(({ line, column }) => ({ line, column }))).toEqual([
      { line: lineOf('b'), column: 1 },
      { line: lineOf('d'), column: 1 },
    ]);
  });

  it('fails the uploads of a thread that dies, and only those, and goes on serving', { timeout: 120_000 }, async () => {
    // Two uploads held open, one in each thread (a new thread while fewer than two, then the one holding fewer),
    // past their first MiB: their bodies are being stored, so their validators are open.
    const held = await Promise.all([generatedBatch(1_500, 11), generatedBatch(1_500, 12)]);
    const sentFirst = 24;
    const uploads = [];
    for (const [index, batch] of held.entries()) {
      const upload = post(harness.baseUrl);
      for (const piece of batch.pieces.slice(0, sentFirst)) await upload.write(piece);
      await eventually(async () => ((await openUploads()) === index + 1 ? true : undefined));
      uploads.push({ upload, batch });
    }
    // The crashing document goes to the first thread of the two, beside one of them.
    const crashing = batchXml([create('x', 'Crash', { entityType: TYPE })]).replace('<createEntity', `${CRASH_MARKER}<createEntity`);
    const crashed = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: crashing,
    });
    expect(crashed.status).toBe(503);
    expect(((await crashed.json()) as { code: string }).code).toBe('ServiceUnavailable');
    expect((await getRecord()).status).toBe(200);

    const answers = await Promise.all(
      uploads.map(async ({ upload, batch }) => {
        for (const piece of batch.pieces.slice(sentFirst, -1)) await upload.write(piece);
        upload.request.end(batch.pieces.at(-1));
        const { status, answer } = await upload.answered;
        return { status, code: status === 200 ? undefined : (JSON.parse(answer) as { code: string }).code };
      }),
    );
    expect(answers.toSorted((a, b) => a.status - b.status)).toEqual([
      { status: 200, code: undefined },
      { status: 503, code: 'ServiceUnavailable' },
    ]);
    // A thread replaces the lost one; nothing of the failed uploads stays open.
    const next = await harness.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('y', 'Ypsilon', { entityType: TYPE })]),
    });
    expect(next.status, await next.clone().text()).toBe(200);
    expect((await getRecord()).status).toBe(200);
    await eventually(async () => ((await openUploads()) === 0 ? true : undefined));
  });
});
