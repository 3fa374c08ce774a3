import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeCommand, EntityRecord } from '../../domain/model.ts';
import { validateDocument } from '../../engine/validation/index.ts';
import { serializeEntityElement } from '../support/markup-entity-writer.ts';
import type { ExportStatusView } from '../../services/exports/status.ts';
import { applyBatch, type AppliedRevision } from '../support/apply.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';
import { expiryScheduleId } from '../../temporal/names.ts';
import { buildApp } from '../../api/app.ts';
import { createLogger } from '../../logger.ts';
import { repairStrandedJobs } from '../../services/batches/recovery.ts';
import { ensureExpirySchedule } from '../../temporal/client/schedules.ts';

type ExportStatus = ExportStatusView;

type Created = AppliedRevision;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function submitBatch(harness: Harness, commands: ChangeCommand[]): Promise<{ transaction: string; entities: Map<string, Created> }> {
  const { transaction, revisions } = await applyBatch(harness, batchXml(commands));
  return { transaction, entities: revisions };
}

function exportApi(harness: Harness) {
  return {
    post(kind: 'snapshots' | 'revisions', body: unknown, options: { query?: string; as?: keyof typeof TEST_TOKENS; type?: string } = {}) {
      return harness.api(`/api/v2/export/${kind}${options.query ?? ''}`, {
        method: 'POST',
        headers: { 'content-type': options.type ?? 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        as: options.as ?? 'export',
      });
    },
    async start(kind: 'snapshots' | 'revisions', body: unknown, query = ''): Promise<string> {
      const response = await this.post(kind, body, { query });
      expect(response.status, await response.clone().text()).toBe(200);
      // The real client reads the export id as plain text.
      expect(response.headers.get('content-type')).toContain('text/plain');
      const id = await response.text();
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.headers.get('location')).toBe(`/api/v2/export/${id}/detail`);
      return id;
    },
    /** The extension resource, after checking that the real status resource agrees with it and holds nothing else. */
    async status(id: string): Promise<ExportStatus> {
      const response = await harness.api(`/api/v2/export/${id}/detail`, { as: 'read' });
      expect(response.status).toBe(200);
      const detail = (await response.json()) as ExportStatus;
      const wire = await harness.api(`/api/v2/export/status/${id}`, { as: 'read' });
      const real = (await wire.json()) as Record<string, unknown>;
      expect(Object.keys(real).sort()).toEqual(['progress', 'state']);
      expect(['PENDING', 'PROCESSING', 'FINISHED', 'ERROR']).toContain(real.state);
      return detail;
    },
    /** Polls until the export finished; every status seen on the way is collected in `seen`. */
    async finished(id: string, seen: string[] = [], timeoutMs = 30_000): Promise<ExportStatus> {
      return eventually(async () => {
        const status = await this.status(id);
        if (seen.at(-1) !== status.status) seen.push(status.status);
        return status.status === 'COMPLETED' || status.status === 'FAILED' ? status : undefined;
      }, timeoutMs);
    },
    download(id: string, encoding = 'identity') {
      return harness.api(`/api/v2/export/download/${id}`, { headers: { 'accept-encoding': encoding } });
    },
    async file(id: string): Promise<Buffer> {
      const response = await this.download(id);
      expect(response.status, await response.clone().text()).toBe(200);
      return Buffer.from(await response.arrayBuffer());
    },
  };
}

function count(xml: string, element: string): number {
  return xml.split(`<${element} `).length - 1;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A raw GET, so that a gzip answer arrives as sent (fetch would decode it). */
function rawGet(
  harness: Harness,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${harness.baseUrl}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('v2 exports', () => {
  let harness: Harness;
  let api: ReturnType<typeof exportApi>;
  const type = `T-${randomUUID()}`;
  let first: { transaction: string; entities: Map<string, Created> };
  let second: { transaction: string; entities: Map<string, Created> };
  let third: { transaction: string; entities: Map<string, Created> };
  const entity = (localId: string) => first.entities.get(localId)!;

  beforeAll(async () => {
    harness = await startHarness({ env: { EXPORT_MAX_IDS: '10' }, exportRecordsPerStep: 2 });
    api = exportApi(harness);
    first = await submitBatch(harness, [
      create('a', 'Karel Čapek', { entityType: type }),
      create('b', 'Božena Němcová', { entityType: type }),
      create('c', 'Jan Neruda & <syn>', { entityType: type }),
      create('d', 'Ema Destinnová', { entityType: type }),
      create('e', 'Alfons Mucha', { entityType: type }),
    ]);
    const a = entity('a');
    const c = entity('c');
    second = await submitBatch(harness, [
      update('ua', a.entityId, a.rev, [
        {
          op: 'newPart',
          part: { partUuid: randomUUID(), type: 'PT_BODY', items: [{ kind: 'string', type: 'BRIEF_DESC', value: 'spisovatel' }] },
        },
      ]),
      update('uc', c.entityId, c.rev, [{ op: 'setEntityType', entityType: `${type}-2` }]),
    ]);
    third = await submitBatch(harness, [create('f', 'Leoš Janáček', { entityType: type })]);
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('exports a snapshot of the named records (numbers and UUIDs mixed) and lists the identifiers that match nothing', async () => {
    const a = entity('a');
    const b = entity('b');
    const d = entity('d');
    const unknownUuid = randomUUID().toUpperCase();
    const id = await api.start('snapshots', [
      a.entityId,
      b.entityUuid.toUpperCase(),
      String(d.entityId),
      999_999_999,
      unknownUuid,
      a.entityUuid,
    ]);

    const seen: string[] = [];
    const status = await api.finished(id, seen);
    expect(status).toMatchObject({
      id,
      kind: 'snapshot',
      status: 'COMPLETED',
      entitiesWritten: 3,
      missing: ['999999999', unknownUuid],
      error: null,
      fromTransId: null,
    });
    expect(seen.every((state) => ['ACCEPTED', 'RUNNING', 'COMPLETED'].includes(state))).toBe(true);
    expect(status.createdAt).toMatch(ISO);
    expect(status.finishedAt).toMatch(ISO);
    expect(status.expiresAt).toMatch(ISO);
    // Default retention: 24 hours after completion.
    expect(Date.parse(status.expiresAt!) - Date.parse(status.finishedAt!)).toBeGreaterThan(23 * 3_600_000);

    const file = await api.file(id);
    expect(status.bytes).toBe(file.length);
    expect(status.sha256).toBe(sha256(file));
    await validateDocument(file, 'v2');
    const xml = file.toString('utf8');
    expect(xml).toMatch(/^<\?xml[^>]*\?>\s*<entities xmlns="http:\/\/cam\.tacr\.cz\/2025"/);
    expect(count(xml, 'entity')).toBe(3);
    const ids = [...xml.matchAll(/<entity entityId="(\d+)"/g)].map((match) => Number(match[1]));
    expect(ids).toEqual([a.entityId, b.entityId, d.entityId]);
    expect(xml).toContain('Karel Čapek');
    // The file holds each stored record exactly as the reference writer writes it (the export reads and writes bytes).
    const stored = await harness.sql<{ record: EntityRecord }>('select record from entity where id = any($1::bigint[]) order by id', [
      [a.entityId, b.entityId, d.entityId],
    ]);
    expect(xml).toContain(stored.map(({ record }) => serializeEntityElement(record, 'v2')).join(''));
    expect(readFileSync(join(harness.config.exportDir, `${id}.xml`)).equals(file)).toBe(true);
  });

  it('writes each record as the reference writer does, whether its element is cut from the stored document or written from the record', async () => {
    const [a, b, d] = [entity('a'), entity('b'), entity('d')];
    const stored = await harness.sql<{ id: string; document_bytes: string }>(
      'select id, document_bytes from entity where id = any($1::bigint[]) order by id',
      [[b.entityId, d.entityId]],
    );
    try {
      // b without a stored document, d with one this writer did not write: both from their records.
      await harness.sql('update entity set document_bytes = null where id = $1', [b.entityId]);
      await harness.sql(`update entity set document_bytes = '<entity>not ours</entity>' where id = $1`, [d.entityId]);
      const id = await api.start('snapshots', [a.entityId, b.entityId, d.entityId]);
      expect(await api.finished(id)).toMatchObject({ status: 'COMPLETED', entitiesWritten: 3 });
      const file = await api.file(id);
      await validateDocument(file, 'v2');
      const records = await harness.sql<{ record: EntityRecord }>('select record from entity where id = any($1::bigint[]) order by id', [
        [a.entityId, b.entityId, d.entityId],
      ]);
      expect(file.toString('utf8')).toContain(records.map(({ record }) => serializeEntityElement(record, 'v2')).join(''));
    } finally {
      for (const row of stored) await harness.sql('update entity set document_bytes = $2 where id = $1', [row.id, row.document_bytes]);
    }
  });

  it('exports a snapshot of every record for an empty list', async () => {
    const [{ n }] = (await harness.sql<{ n: string }>('select count(*) as n from entity')) as [{ n: string }];
    const id = await api.start('snapshots', []);
    const status = await api.finished(id);
    expect(status).toMatchObject({ status: 'COMPLETED', entitiesWritten: Number(n), missing: [] });
    const file = await api.file(id);
    await validateDocument(file, 'v2');
    const xml = file.toString('utf8');
    expect(count(xml, 'entity')).toBe(Number(n));
    for (const localId of ['a', 'b', 'c', 'd', 'e']) expect(xml).toContain(`entityUuid="${entity(localId).entityUuid}"`);
    expect(xml).toContain(`entityUuid="${third.entities.get('f')!.entityUuid}"`);
  });

  it('exports the revisions after a transaction, in transaction order, for the named records', async () => {
    const a = entity('a');
    const c = entity('c');
    const e = entity('e');
    const f = third.entities.get('f')!;
    const id = await api.start(
      'revisions',
      [f.entityUuid, c.entityId, a.entityId, e.entityId, 123_456_789],
      `?fromTransId=${first.transaction}`,
    );
    const status = await api.finished(id);
    // e has no revision after the first batch: it exists, so it is not missing, and contributes nothing.
    expect(status).toMatchObject({
      kind: 'revisions',
      status: 'COMPLETED',
      fromTransId: first.transaction,
      entitiesWritten: 3,
      missing: ['123456789'],
    });

    const file = await api.file(id);
    await validateDocument(file, 'v2');
    const xml = file.toString('utf8');
    expect(xml).toMatch(/<entityRecordRevisions xmlns="http:\/\/cam\.tacr\.cz\/2025"/);
    expect(count(xml, 'revision')).toBe(3);
    const order = [...xml.matchAll(/<revision revisionUuid="([^"]+)" entityId="(\d+)"/g)].map((match) => Number(match[2]));
    expect(order).toEqual([a.entityId, c.entityId, f.entityId]);
    expect(xml).toContain('spisovatel');
    expect(xml).toContain(`${type}-2`);
    // The revision UUIDs are those of the stored revisions.
    const stored = await harness.sql<{ uuid: string }>(
      'select uuid from revision where entity_id = $1 and seq > (select seq from transaction where uuid = $2)',
      [a.entityId, first.transaction],
    );
    expect(xml).toContain(`revisionUuid="${stored[0]!.uuid}"`);
  });

  it('exports every revision after a transaction for an empty list', async () => {
    const [{ n }] = (await harness.sql<{ n: string }>(
      'select count(*) as n from revision where seq > (select seq from transaction where uuid = $1)',
      [second.transaction],
    )) as [{ n: string }];
    const id = await api.start('revisions', [], `?fromTransId=${second.transaction}`);
    const status = await api.finished(id);
    expect(status).toMatchObject({ status: 'COMPLETED', entitiesWritten: Number(n), missing: [] });
    expect(Number(n)).toBeGreaterThanOrEqual(1);
    const file = await api.file(id);
    await validateDocument(file, 'v2');
    expect(count(file.toString('utf8'), 'revision')).toBe(Number(n));
    expect(file.toString('utf8')).toContain(`entityUuid="${third.entities.get('f')!.entityUuid}"`);
  });

  it('serves the file with its type, length, disposition and SHA-256, and gzip-encoded on request', async () => {
    const id = await api.start('snapshots', [entity('a').entityId, entity('b').entityId, entity('c').entityId]);
    const status = await api.finished(id);

    const plain = await api.download(id);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('application/xml');
    expect(plain.headers.get('content-disposition')).toBe(`attachment; filename="snapshot-${id}.xml"`);
    const bytes = Buffer.from(await plain.arrayBuffer());
    expect(plain.headers.get('content-length')).toBe(String(bytes.length));
    expect(plain.headers.get('x-content-sha256')).toBe(sha256(bytes));
    expect(plain.headers.get('digest')).toBe(`sha-256=${createHash('sha256').update(bytes).digest('base64')}`);
    expect(status.sha256).toBe(sha256(bytes));

    const gzipped = await rawGet(harness, `/api/v2/export/download/${id}`, {
      authorization: `Bearer ${TEST_TOKENS.export}`,
      'accept-encoding': 'gzip, deflate',
    });
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['content-length']).toBeUndefined();
    expect(gzipped.headers['x-content-sha256']).toBe(sha256(bytes));
    expect(gzipped.headers.vary).toContain('Accept-Encoding');
    expect(gunzipSync(gzipped.body).equals(bytes)).toBe(true);
  });

  it('answers 404 for unknown exports and 400 for ids that are not UUIDs', async () => {
    const unknown = await harness.api(`/api/v2/export/status/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    expect(await unknown.json()).toMatchObject({ code: 'ExportNotFound' });
    const download = await api.download(randomUUID());
    expect(download.status).toBe(404);
    expect(await download.json()).toMatchObject({ code: 'ExportNotFound' });
    expect((await harness.api('/api/v2/export/status/not-a-uuid')).status).toBe(400);
    expect((await harness.api('/api/v2/export/download/12')).status).toBe(400);
  });

  it('rejects bodies that are not arrays of numbers and UUIDs, too many ids, and other media types', async () => {
    const bad = await api.post('snapshots', [1, 'Karel', entity('a').entityUuid, -2, 1.5, null, '42']);
    expect(bad.status).toBe(400);
    const problem = (await bad.json()) as { code: string; errors: { path: string }[] };
    expect(problem.code).toBe('BadRequest');
    expect(problem.errors.map((error) => error.path)).toEqual(['body.1', 'body.3', 'body.4', 'body.5']);

    for (const body of ['{}', '"x"', '17', 'not json', '']) {
      const response = await api.post('snapshots', body);
      expect(response.status, body).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'BadRequest' });
    }
    const tooMany = await api.post(
      'snapshots',
      Array.from({ length: 11 }, (_, index) => index + 1),
    );
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as { detail: string }).detail).toContain('at most 10');
    expect(
      (
        await api.post(
          'snapshots',
          Array.from({ length: 10 }, (_, index) => index + 1),
        )
      ).status,
    ).toBe(200);

    const wrongType = await api.post('snapshots', '[1]', { type: 'text/plain' });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toMatchObject({ code: 'UnsupportedMediaType' });
    expect((await api.post('revisions', '[1]', { type: 'application/xml', query: `?fromTransId=${first.transaction}` })).status).toBe(415);
  });

  it('needs a known fromTransId for revisions', async () => {
    const missing = await api.post('revisions', []);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 'BadRequest', errors: [{ path: 'query.fromTransId' }] });
    expect((await api.post('revisions', [], { query: '?fromTransId=17' })).status).toBe(400);
    const unknown = await api.post('revisions', [], { query: `?fromTransId=${randomUUID()}` });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'TransactionNotFound' });
    const badBody = await api.post('revisions', ['x'], { query: `?fromTransId=${first.transaction}` });
    expect(badBody.status).toBe(400);
  });

  it("needs the 'export' permission to start and download, 'read' for the status", async () => {
    const id = await api.start('snapshots', [entity('e').entityId]);
    await api.finished(id);
    for (const kind of ['snapshots', 'revisions'] as const) {
      const response = await api.post(kind, [], { as: 'read', query: kind === 'revisions' ? `?fromTransId=${first.transaction}` : '' });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'Forbidden' });
    }
    expect((await harness.api(`/api/v2/export/download/${id}`, { as: 'read' })).status).toBe(403);
    expect((await harness.api(`/api/v2/export/status/${id}`, { as: 'read' })).status).toBe(200);
    expect((await harness.api(`/api/v2/export/status/${id}`, { as: null })).status).toBe(401);
    expect((await harness.api(`/api/v2/export/download/${id}`, { as: 'admin' })).status).toBe(200);
  });

  it('answers 409 ExportNotReady while the export has not run', async () => {
    const idle = await startHarness({ worker: false });
    try {
      const idleApi = exportApi(idle);
      const id = await idleApi.start('snapshots', []);
      expect(await idleApi.status(id)).toMatchObject({
        status: 'ACCEPTED',
        entitiesWritten: 0,
        bytes: 0,
        finishedAt: null,
        expiresAt: null,
        sha256: null,
      });
      const response = await idleApi.download(id);
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ code: 'ExportNotReady' });
      const description = await idle.temporal.workflow.getHandle(id).describe();
      expect(description.type).toBe('exportWorkflow');
      expect(description.taskQueue).toBe(idle.config.TEMPORAL_TASK_QUEUE);
      await idle.temporal.workflow.getHandle(id).terminate('test over');
    } finally {
      await idle.close();
    }
  });

  it('while Temporal does not answer, keeps a started export ACCEPTED (not FAILED), and the recovery sweep starts it', async () => {
    // No retry interceptor: its timers would outlive the connection this test closes.
    const unreachable = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500, interceptors: [] }) });
    const app = buildApp({
      config: harness.config,
      db: harness.db,
      temporal: unreachable,
      log: createLogger('silent', 'test'),
      tokens: 'disabled',
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    let id: string;
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/export/snapshots`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([entity('a').entityId]),
      });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      id = text;
      expect(await harness.sql('select status, error from export_request where id = $1', [id])).toEqual([
        { status: 'ACCEPTED', error: null },
      ]);
      // Its status: waiting, not failed.
      expect(await api.status(id)).toMatchObject({ status: 'ACCEPTED', state: 'PENDING' });
    } finally {
      server.close();
      await unreachable.connection.close().catch(() => undefined);
    }
    // Once Temporal answers, the sweep starts the kept export's workflow, and the worker writes it. (Made older than the
    // sweep's threshold rather than sweeping every row: other files' fresh exports are on their way to their own start.)
    await harness.sql(`update export_request set created_at = now() - interval '2 minutes' where id = $1`, [id]);
    const { started } = await repairStrandedJobs({ config: harness.config, temporal: harness.temporal, db: harness.db });
    expect(started).toContain(id);
    const done = await api.finished(id);
    expect(done).toMatchObject({ status: 'COMPLETED', entitiesWritten: 1 });
    expect((await repairStrandedJobs({ config: harness.config, temporal: harness.temporal, db: harness.db })).started).not.toContain(id);
  });

  describe('with a worker that crashes', () => {
    let crashing: Harness;
    let crashApi: ReturnType<typeof exportApi>;
    let mode: 'once' | 'always' = 'once';
    const crashes: Array<{ id: string; written: number; attempt: number }> = [];

    beforeAll(async () => {
      crashing = await startHarness({
        exportRecordsPerStep: 2,
        afterExportStep: (id, written, attempt) => {
          if ((mode === 'once' && attempt === 1 && written >= 4) || mode === 'always') {
            crashes.push({ id, written, attempt });
            throw new Error('injected crash in the middle of the export');
          }
        },
      });
      crashApi = exportApi(crashing);
    });
    afterAll(async () => {
      await crashing?.close();
    });

    it('writes a correct file on the retry after a crash in the middle', async () => {
      mode = 'once';
      const ids = [...first.entities.values(), ...third.entities.values()].map((created) => created.entityId);
      const id = await crashApi.start('snapshots', ids);
      const seen: string[] = [];
      const status = await crashApi.finished(id, seen);
      expect(crashes.filter((crash) => crash.id === id)).toEqual([{ id, written: 4, attempt: 1 }]);
      // Between the attempts the export is RUNNING (the retry waits a second).
      expect(seen).toContain('RUNNING');
      expect(status).toMatchObject({ status: 'COMPLETED', entitiesWritten: 6, missing: [] });

      const file = await crashApi.file(id);
      await validateDocument(file, 'v2');
      const xml = file.toString('utf8');
      expect(count(xml, 'entity')).toBe(6);
      expect(xml.split('<?xml').length - 1).toBe(1);
      expect(xml.split('</entities>').length - 1).toBe(1);
      expect(status.sha256).toBe(sha256(file));
      expect(status.bytes).toBe(file.length);
      // Nothing of the crashed attempt is left beside the file.
      expect(readdirSync(crashing.config.exportDir).filter((name) => name.includes(id))).toEqual([`${id}.xml`]);
    });

    it('marks the export FAILED when every attempt fails; its download answers 409 with the error', async () => {
      mode = 'always';
      const id = await crashApi.start('snapshots', [entity('a').entityId, entity('b').entityId, entity('c').entityId]);
      const status = await crashApi.finished(id, [], 50_000);
      expect(status).toMatchObject({ status: 'FAILED', finishedAt: expect.stringMatching(ISO), expiresAt: null, sha256: null });
      expect(status.error).toContain('injected crash');
      expect(crashes.filter((crash) => crash.id === id).length).toBe(5);
      const response = await crashApi.download(id);
      expect(response.status).toBe(409);
      const problem = (await response.json()) as { code: string; detail: string; errors: { message: string }[] };
      expect(problem.code).toBe('ExportNotReady');
      expect(problem.detail).toContain('FAILED');
      expect(problem.errors[0]!.message).toContain('injected crash');
      expect(readdirSync(crashing.config.exportDir).filter((name) => name.includes(id))).toEqual([]);
    }, 60_000);
  });

  it('the expiry schedule deletes the file after the retention; then the status is EXPIRED and the download 410', async () => {
    // 0.0005 h = 1.8 s.
    const shortLived = await startHarness({ env: { EXPORT_RETENTION_HOURS: '0.0005' } });
    try {
      const shortApi = exportApi(shortLived);
      // As every API does at start; a second call (another API, a restart) finds the schedule there.
      const schedule = { taskQueue: shortLived.config.TEMPORAL_TASK_QUEUE, everyMs: 3_600_000 };
      expect(await ensureExpirySchedule(shortLived.temporal, schedule)).toBe(true);
      expect(await ensureExpirySchedule(shortLived.temporal, schedule)).toBe(false);
      const handle = shortLived.temporal.schedule.getHandle(expiryScheduleId(schedule.taskQueue));
      expect((await handle.describe()).action).toMatchObject({ type: 'startWorkflow', workflowType: 'expiryWorkflow' });

      const id = await shortApi.start('snapshots', [entity('a').entityId]);
      const status = await shortApi.finished(id);
      expect(Date.parse(status.expiresAt!) - Date.parse(status.finishedAt!)).toBe(1800);
      // The export's workflow closed with the file ready; it does not wait for the expiry.
      expect(await shortLived.temporal.workflow.getHandle(id).result()).toMatchObject({
        exportId: id,
        status: 'COMPLETED',
        entitiesWritten: 1,
      });
      const path = join(shortLived.config.exportDir, `${id}.xml`);
      expect(existsSync(path)).toBe(true);

      await eventually(async () => (Date.now() > Date.parse(status.expiresAt!) ? true : undefined));
      // Past its expiry the status says EXPIRED at once, before the schedule has run.
      expect(await shortApi.status(id)).toMatchObject({ status: 'EXPIRED', entitiesWritten: 1 });
      await handle.trigger();
      const expired = await eventually(async () => {
        const [row] = await shortLived.sql<{ status: string }>('select status from export_request where id = $1', [id]);
        return row?.status === 'EXPIRED' ? row : undefined;
      }, 15_000);
      expect(expired.status).toBe('EXPIRED');
      expect(existsSync(path)).toBe(false);
      expect(await shortApi.status(id)).toMatchObject({ status: 'EXPIRED', state: 'ERROR', entitiesWritten: 1 });
      const gone = await shortApi.download(id);
      expect(gone.status).toBe(410);
      expect(await gone.json()).toMatchObject({ code: 'ExportExpired' });
      await handle.delete();
    } finally {
      await shortLived.close();
    }
  });
});
