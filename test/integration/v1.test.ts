import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { validateDocument } from '../../engine/validation/index.ts';
import { batchXml, create, update } from '../support/batches.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';

// The legacy interface (spec §4.2) over real HTTP: the cam-2019 documents,
// the synchronous batch and its answer when the wait runs out, the final 102
// and the cross-version reads.

const attribute = (xml: string, name: string) => new RegExp(`\\b${name}="([^"]+)"`).exec(xml)?.[1];
const count = (xml: string, element: string) => xml.match(new RegExp(`<${element}[ >/]`, 'g'))?.length ?? 0;

async function expectValidV1(xml: string): Promise<void> {
  await validateDocument(Buffer.from(xml), 'v1');
}

/** A 200 text/xml answer, valid against the v1 schema, whose root is `root`: its text. */
async function v1Document(response: Response, root: string): Promise<string> {
  const xml = await response.text();
  expect(response.status, xml).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/xml');
  await expectValidV1(xml);
  expect(xml).toContain(`<${root} xmlns="http://cam.tacr.cz/2019"`);
  return xml;
}

/** A raw HTTP/1.1 exchange: everything the server sent until it closed the connection. */
async function rawExchange(
  baseUrl: string,
  request: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  await once(socket, 'connect');
  const body = Buffer.from(request.body ?? '');
  const headers = { Host: `${hostname}:${port}`, 'Content-Length': String(body.length), ...request.headers };
  socket.write(
    `${request.method} ${request.path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`,
  );
  socket.write(body);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  return Buffer.concat(chunks).toString('latin1');
}

/** curl's view of a request: the status code it reports and its exit code. */
function curlStatus(url: string, token: string): Promise<{ httpCode: string; exitCode: number }> {
  return new Promise((resolve) => {
    execFile(
      'curl',
      ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', '-H', `Authorization: Bearer ${token}`, url],
      (error, stdout) => {
        resolve({ httpCode: stdout, exitCode: error ? Number(error.code) : 0 });
      },
    );
  });
}

describe('v1 legacy interface', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ env: { UPDATES_FROM_MAX: '3', V1_BATCH_WAIT_SECONDS: '30' } });
  });
  afterAll(async () => {
    await harness?.close();
  });

  const postBatch = (xml: string, as: keyof typeof TEST_TOKENS = 'admin', contentType = 'text/xml') =>
    harness.api('/api/v1/batches', { method: 'POST', headers: { 'content-type': contentType }, body: xml, as });

  /** Sends a v1 batch and returns its (valid) result document, `bus` or `bue`. */
  async function applyV1(xml: string): Promise<string> {
    const response = await postBatch(xml);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/xml');
    await expectValidV1(text);
    return text;
  }

  async function createV1(
    name: string,
    entityType = `T-${randomUUID()}`,
  ): Promise<{ entityId: string; entityUuid: string; rev: string; trns: string }> {
    const bus = await applyV1(batchXml([create('a', name, { entityType })], { version: 'v1' }));
    expect(bus).toContain('<bus ');
    return {
      entityId: attribute(bus, 'eid')!,
      entityUuid: attribute(bus, 'euid')!,
      rev: attribute(bus, 'rev')!,
      trns: attribute(bus, 'trns')!,
    };
  }

  const postJson = (path: string, body: unknown, as: keyof typeof TEST_TOKENS = 'admin') =>
    harness.api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), as });

  describe('POST /batches and GET /entities/{apid}', () => {
    it('waits for a synchronous POST less than the real client reads before it gives up (OkHttp, 60 s)', () => {
      const { V1_BATCH_WAIT_SECONDS } = loadConfig({ FORCE_KEY_SECRET: 'a-test-secret-of-16+' });
      expect(V1_BATCH_WAIT_SECONDS).toBe(50);
      expect(V1_BATCH_WAIT_SECONDS).toBeLessThan(60);
    });

    it('accepts a batch written by hand in the public v1 structure and answers bus synchronously', async () => {
      const bid = randomUUID();
      const entityType = `T-${randomUUID()}`;
      const namePart = randomUUID();
      const xml = `<?xml version="1.0" encoding="UTF-8"?>
<bu xmlns="http://cam.tacr.cz/2019">
  <inf bid="${bid}">
    <usr>Archivní Systém</usr>
  </inf>
  <ce lid="osoba1" et="${entityType}">
    <prts>
      <p pid="${namePart}" t="PT_NAME">
        <itms>
          <si t="NM_MAIN">Němcová</si>
          <si t="NM_MINOR">Božena</si>
          <di t="NM_DATE" f="1820-02-04T00:00:00" to="1862-01-21T23:59:59" fmt="D-D"/>
        </itms>
      </p>
      <p t="PT_BODY">
        <itms>
          <si t="BRIEF_DESC">spisovatelka</si>
          <li t="SOURCE_LINK"><url>https://example.org/nemcova</url><nm>Životopis</nm></li>
        </itms>
      </p>
    </prts>
  </ce>
</bu>`;
      const bus = await applyV1(xml);
      expect(bus).toMatch(/^<\?xml[^>]*\?>\s*<bus xmlns="http:\/\/cam\.tacr\.cz\/2019"/);
      expect(bus).toContain('lid="osoba1"');
      const entityId = attribute(bus, 'eid')!;
      const rev = attribute(bus, 'rev')!;
      const [transaction] = await harness.sql<{ uuid: string }>('select uuid from transaction where batch_id = $1', [bid]);
      expect(attribute(bus, 'trns')).toBe(transaction!.uuid);
      const [batch] = await harness.sql<{ api_version: string; force: boolean; status: string }>(
        'select api_version, force, status from batch where id = $1',
        [bid],
      );
      expect(batch).toMatchObject({ api_version: 'v1', force: false, status: 'COMPLETED' });

      const ent = await v1Document(await harness.api(`/api/v1/entities/${entityId}`), 'ent');
      expect(ent).toContain(`eid="${entityId}"`);
      expect(ent).toContain(`<rid>${rev}</rid>`);
      expect(ent).toContain('<usr>Archivní Systém</usr>');
      expect(ent).toContain('Němcová');

      // A second hand-written batch updates the record it created, naming the rev it was given.
      const update = `<?xml version="1.0" encoding="UTF-8"?>
<bu xmlns="http://cam.tacr.cz/2019">
  <inf><usr>Archivní Systém</usr></inf>
  <ue>
    <e lid="u1" eid="${entityId}" rev="${rev}"/>
    <nip t="PT_IDENT"><itms><si t="IDN_VALUE">NKC-123</si></itms></nip>
    <set>${entityType}-2</set>
  </ue>
</bu>`;
      const updated = await applyV1(update);
      expect(updated).toContain('<bus ');
      expect(attribute(updated, 'eid')).toBe(entityId);
      const after = await (await harness.api(`/api/v1/entities/${attribute(bus, 'euid')}`)).text();
      expect(after).toContain(`ent="${entityType}-2"`);
      expect(after).toContain('NKC-123');
      expect(after).toContain(`<rid>${attribute(updated, 'rev')}</rid>`);
    });

    it('reads across versions: written through v1, read through v2, and the other way round', async () => {
      const viaV1 = await createV1('Alois Jirásek');
      const v2read = await harness.api(`/api/v2/entities/${viaV1.entityId}`);
      expect(v2read.status).toBe(200);
      const entity = await v2read.text();
      expect(entity).toContain('<entity ');
      expect(entity).toContain(`entityUuid="${viaV1.entityUuid}"`);
      expect(entity).toContain(`<rev>${viaV1.rev}</rev>`);
      expect(entity).toContain('Alois Jirásek');

      const submitted = await harness.api('/api/v2/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('b', 'Jan Neruda', { entityType: `T-${randomUUID()}` })]),
      });
      expect(submitted.status).toBe(200);
      const updateRequestId = (await submitted.json()) as string;
      expect((await batchEnded(harness, updateRequestId)).status).toBe('COMPLETED');
      const result = await (await harness.api(`/api/v2/batches/${updateRequestId}/result`)).text();
      const v1read = await harness.api(`/api/v1/entities/${attribute(result, 'entityUuid')}`);
      expect(v1read.status).toBe(200);
      const ent = await v1read.text();
      await expectValidV1(ent);
      expect(ent).toContain(`eid="${attribute(result, 'entityId')}"`);
      expect(ent).toContain('Jan Neruda');

      // The v1 response of a batch sent through v2 is the same outcome in the v1 format.
      const response = await harness.api(`/api/v1/batches/${updateRequestId}/response`);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain(`eid="${attribute(result, 'entityId')}"`);
    });

    it('answers 404 EntityNotFound for unknown records, also for identifiers that are neither number nor UUID, 401 without a token', async () => {
      const missing = await harness.api('/api/v1/entities/987654321');
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toContain('application/problem+json');
      expect(await missing.json()).toMatchObject({ code: 'EntityNotFound', status: 404 });
      expect((await harness.api(`/api/v1/entities/${randomUUID()}`)).status).toBe(404);
      for (const bad of ['abc', '0', '-5', '1.5']) {
        const response = await harness.api(`/api/v1/entities/${bad}`);
        expect(response.status, bad).toBe(404);
        expect(await response.json()).toMatchObject({ code: 'EntityNotFound' });
      }
      expect((await harness.api('/api/v1/entities/1', { as: null })).status).toBe(401);
    });

    it('answers application/xml to a client that asks for it', async () => {
      const { entityId } = await createV1('Karel Hynek Mácha');
      const response = await harness.api(`/api/v1/entities/${entityId}`, { headers: { accept: 'application/xml' } });
      expect(response.headers.get('content-type')).toContain('application/xml');
    });

    it('answers 403 to a token without the write permission and stores nothing', async () => {
      const bid = randomUUID();
      const denied = await postBatch(batchXml([create('a', 'Nepovolený')], { uuid: bid, version: 'v1' }), 'read');
      expect(denied.status).toBe(403);
      expect(await denied.json()).toMatchObject({ code: 'Forbidden' });
      expect(await harness.sql('select 1 from batch where id = $1', [bid])).toHaveLength(0);
    });

    it('answers 409 BatchAlreadyExists to a batch sent again', async () => {
      const bid = randomUUID();
      const xml = batchXml([create('a', 'Jan Amos Komenský', { entityType: `T-${randomUUID()}` })], { uuid: bid, version: 'v1' });
      expect(await applyV1(xml)).toContain('<bus ');
      const again = await postBatch(xml);
      expect(again.status).toBe(409);
      expect(again.headers.get('content-type')).toContain('application/problem+json');
      expect(await again.json()).toMatchObject({ code: 'BatchAlreadyExists' });
    });

    it('refuses v2 documents, malformed XML and other media types', async () => {
      const v2 = await postBatch(batchXml([create('a', 'Verze Dvě')]));
      expect(v2.status).toBe(400);
      // Sent to the wrong interface: the detail names the right one.
      expect(await v2.json()).toMatchObject({
        code: 'SchemaViolation',
        detail: expect.stringContaining('send v2 batches to /api/v2/batches'),
      });
      const malformed = await postBatch('<bu xmlns="http://cam.tacr.cz/2019"><inf>');
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toMatchObject({ code: 'InvalidXml' });
      const json = await postBatch('{}', 'admin', 'application/json');
      expect(json.status).toBe(415);
      expect(
        (
          await postBatch(
            batchXml([create('a', 'Aplikační XML', { entityType: `T-${randomUUID()}` })], { version: 'v1' }),
            'admin',
            'application/xml',
          )
        ).status,
      ).toBe(200);
    });
  });

  describe('v1 ErrorType of failed batches (bue)', () => {
    async function expectFailure(xml: string, errorType: string): Promise<string> {
      const bue = await applyV1(xml);
      expect(bue).toContain('<bue ');
      expect(bue).toContain(`<et>${errorType}</et>`);
      expect(bue).not.toMatch(/forceKey/i);
      return bue;
    }

    it('a stale rev is ET_OTHER_REV', async () => {
      const { entityId, rev } = await createV1('Petr Bezruč');
      await applyV1(
        batchXml([update('u', Number(entityId), rev, [{ op: 'setEntityType', entityType: `T-${randomUUID()}` }])], { version: 'v1' }),
      );
      await expectFailure(
        batchXml([update('u', Number(entityId), rev, [{ op: 'setEntityType', entityType: 'X' }])], { version: 'v1' }),
        'ET_OTHER_REV',
      );
    });

    it('an entity UUID already taken is ET_DUPLICATED_UUID', async () => {
      const { entityUuid } = await createV1('Jaroslav Hašek');
      await expectFailure(
        batchXml([create('dup', 'Jiný Hašek', { entityType: `T-${randomUUID()}`, entityUuid })], { version: 'v1' }),
        'ET_DUPLICATED_UUID',
      );
    });

    it('a preferred name that exists is ET_PREF_NAME_EXIST: a warning fails the batch, since v1 has no force, and nothing is written', async () => {
      const entityType = `T-${randomUUID()}`;
      await createV1('Josef Lada', entityType);
      const bid = randomUUID();
      const bue = await expectFailure(
        batchXml([create('again', 'Josef Lada', { entityType })], { uuid: bid, version: 'v1' }),
        'ET_PREF_NAME_EXIST',
      );
      expect(bue).toContain('lid="again"');
      expect(await harness.sql('select 1 from entity where entity_type = $1', [entityType])).toHaveLength(1);
      expect(await harness.sql('select 1 from transaction where batch_id = $1', [bid])).toHaveLength(0);
      // GET /response repeats the stored outcome.
      const response = await harness.api(`/api/v1/batches/${bid}/response`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(bue);
    });

    it('an unknown entity is ET_ERROR', async () => {
      await expectFailure(
        batchXml([update('x', 999_999_977, randomUUID(), [{ op: 'setEntityType', entityType: 'X' }])], { version: 'v1' }),
        'ET_ERROR',
      );
    });
  });

  describe('GET /batches/{bid}/response', () => {
    it('answers 404 BatchNotFound for an unknown batch and 400 for a bid that is not a UUID', async () => {
      const unknown = await harness.api(`/api/v1/batches/${randomUUID()}/response`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ code: 'BatchNotFound' });
      expect((await harness.api('/api/v1/batches/nope/response')).status).toBe(400);
    });

    it('answers a POST whose batch outlasts the wait with a bue the real client reads, and GET with a final 102 while it is processing (raw socket, curl, undici, node:http)', async () => {
      // No worker: the batch stays ACCEPTED, and the synchronous POST gives up after one second.
      const idle = await startHarness({ worker: false, env: { V1_BATCH_WAIT_SECONDS: '1' } });
      const bid = randomUUID();
      try {
        const xml = batchXml([create('a', 'Čekající Záznam', { entityType: `T-${randomUUID()}` })], { uuid: bid, version: 'v1' });
        // The v1 POST may answer 200 (bus or bue) or 409. The real client (OkHttp 4.12 under a generated
        // client) skips a 1xx as interim and fails on the closed connection; a 200 bue it reads and reports.
        const posted = await idle.api('/api/v1/batches', {
          method: 'POST',
          headers: { 'content-type': 'text/xml; charset=utf-8' },
          body: xml,
          as: 'write',
        });
        const bue = await posted.text();
        expect(posted.status, bue).toBe(200);
        expect(posted.headers.get('content-type')).toContain('text/xml');
        expect(posted.headers.get('location')).toBe(`/api/v1/batches/${bid}/response`);
        await expectValidV1(bue);
        expect(bue).toContain('<bue ');
        expect(count(bue, 'em')).toBe(1);
        expect(bue).toContain('<et>ET_ERROR</et>');
        expect(bue).toMatch(new RegExp(`<msg>[^<]*${bid}[^<]*still being processed[^<]*/api/v1/batches/${bid}/response`));
        // Only the answer gave up: the batch is still waiting to be applied, not failed.
        expect((await idle.api(`/api/v2/batches/${bid}/detail`).then((r) => r.json())) as { status: string }).toMatchObject({
          status: 'ACCEPTED',
        });

        const url = `${idle.baseUrl}/api/v1/batches/${bid}/response`;
        const raw = await rawExchange(idle.baseUrl, {
          method: 'GET',
          path: `/api/v1/batches/${bid}/response`,
          headers: { Authorization: `Bearer ${TEST_TOKENS.read}` },
        });
        expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 102 Processing');
        expect(raw).toMatch(/\r\nx-request-id: [\w-]+\r\n/i);

        // curl reports 102; it exits 52 ("empty reply") because, by RFC 9110, a 1xx is interim and no final answer followed.
        const curl = await curlStatus(url, TEST_TOKENS.read);
        expect(curl.httpCode).toBe('102');
        expect(curl.exitCode).toBe(52);

        // undici (Node's fetch) also takes 1xx as interim: it hands the 102 to onInfo and then fails on the closed socket.
        const fetched = await fetch(url, { headers: { authorization: `Bearer ${TEST_TOKENS.read}` } }).then(
          () => undefined,
          (error: Error & { cause?: { code?: string } }) => error.cause?.code,
        );
        expect(fetched).toBe('UND_ERR_SOCKET');
        // Node's own undici instance, reached through undici's documented global-dispatcher key.
        const dispatcher = (globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')] as {
          request(options: object): Promise<unknown>;
        };
        const informational: number[] = [];
        const outcome = await dispatcher
          .request({
            origin: idle.baseUrl,
            path: `/api/v1/batches/${bid}/response`,
            method: 'GET',
            headers: { authorization: `Bearer ${TEST_TOKENS.read}` },
            onInfo: (info: { statusCode: number }) => informational.push(info.statusCode),
          })
          .then(
            () => 'final response',
            (error: { code?: string }) => error.code,
          );
        expect(informational).toEqual([102]);
        expect(outcome).toBe('UND_ERR_SOCKET');

        // node:http surfaces the 102 as an 'information' event, then the socket closes.
        const seen = await new Promise<{ status?: number; error?: string }>((resolve) => {
          const seenSoFar: { status?: number; error?: string } = {};
          const request = http.get(url, { headers: { authorization: `Bearer ${TEST_TOKENS.read}` } });
          request.on('information', (info) => (seenSoFar.status = info.statusCode));
          request.on('error', (error: NodeJS.ErrnoException) => resolve({ ...seenSoFar, error: error.code }));
          request.on('response', () => resolve({ ...seenSoFar, error: 'unexpected final response' }));
        });
        expect(seen).toEqual({ status: 102, error: 'ECONNRESET' });

        // The server stays healthy after answering on the raw socket.
        expect((await idle.api('/health')).status).toBe(200);
        expect((await idle.api(`/api/v1/batches/${randomUUID()}/response`)).status).toBe(404);
      } finally {
        await idle.temporal.workflow
          .getHandle(bid)
          .terminate('test cleanup')
          .catch(() => undefined);
        await idle.close();
      }
    });

    it('answers 200 with bus for a finished batch', async () => {
      const bid = randomUUID();
      const bus = await applyV1(batchXml([create('a', 'Hotová Dávka', { entityType: `T-${randomUUID()}` })], { uuid: bid, version: 'v1' }));
      const response = await harness.api(`/api/v1/batches/${bid}/response`, { as: 'read' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/xml');
      expect(await response.text()).toBe(bus);
    });
  });

  describe('POST /export/snapshots and /export/revisions', () => {
    it('streams the current form of the listed records as ents; unknown ids are absent', async () => {
      const first = await createV1('Bedřich Smetana');
      const second = await createV1('Leoš Janáček');
      const response = await postJson(
        '/api/v1/export/snapshots',
        [first.entityId, second.entityUuid.toUpperCase(), '987654320', randomUUID(), first.entityUuid],
        'export',
      );
      const ents = await v1Document(response, 'ents');
      expect(count(ents, 'ent')).toBe(2);
      expect(ents).toContain(`eid="${first.entityId}"`);
      expect(ents).toContain('Leoš Janáček');

      const empty = await (await postJson('/api/v1/export/snapshots', [])).text();
      await expectValidV1(empty);
      expect(count(empty, 'ent')).toBe(0);
    });

    it('refuses bad id lists (400), other media types (415) and tokens without the export permission (403)', async () => {
      const bad = await postJson('/api/v1/export/snapshots', ['abc']);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ code: 'BadRequest' });
      expect((await postJson('/api/v1/export/snapshots', { ids: [] })).status).toBe(400);
      const notJson = await harness.api('/api/v1/export/snapshots', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '[1,',
      });
      expect(notJson.status).toBe(400);
      const xml = await harness.api('/api/v1/export/snapshots', { method: 'POST', headers: { 'content-type': 'text/xml' }, body: '<x/>' });
      expect(xml.status).toBe(415);
      expect((await postJson('/api/v1/export/snapshots', [], 'read')).status).toBe(403);
    });

    it('streams the changes after a transaction as errs, in transaction order, for all or only the listed records', async () => {
      const entityType = `T-${randomUUID()}`;
      const first = await createV1('Ema Destinnová', entityType);
      const updated = await applyV1(
        batchXml([update('u', Number(first.entityId), first.rev, [{ op: 'setEntityType', entityType: `${entityType}-2` }])], {
          version: 'v1',
        }),
      );
      const second = await createV1('Otakar Ševčík', entityType);

      const all = await postJson(`/api/v1/export/revisions?fromTransId=${first.trns}`, [], 'export');
      const errs = await v1Document(all, 'errs');
      expect(count(errs, 'rev')).toBe(2);
      const [revision] = await harness.sql<{ uuid: string }>(
        'select r.uuid from revision r join transaction t on t.seq = r.seq where t.uuid = $1',
        [attribute(updated, 'trns')],
      );
      expect(errs).toContain(`rev="${revision!.uuid}"`);
      expect(errs).toContain(`<sent>${entityType}-2</sent>`);
      expect(errs.indexOf(`eid="${first.entityId}"`)).toBeLessThan(errs.indexOf(`eid="${second.entityId}"`));
      expect(errs).toContain('Otakar Ševčík');

      const onlySecond = await (await postJson(`/api/v1/export/revisions?fromTransId=${first.trns}`, [second.entityUuid])).text();
      await expectValidV1(onlySecond);
      expect(count(onlySecond, 'rev')).toBe(1);
      expect(onlySecond).toContain(`eid="${second.entityId}"`);
      expect(onlySecond).not.toContain(`eid="${first.entityId}"`);
    });

    it('answers 404 TransactionNotFound for an unknown transaction and 400 without one', async () => {
      const unknown = await postJson(`/api/v1/export/revisions?fromTransId=${randomUUID()}`, []);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ code: 'TransactionNotFound' });
      expect((await postJson('/api/v1/export/revisions', [])).status).toBe(400);
    });
  });

  describe('POST /search', () => {
    it('finds records by v1 QueryParamsDef (types, RS_* states, codes) and answers qr, paged', async () => {
      const entityType = `T-${randomUUID()}`;
      const records = [
        await createV1('Hledaný První', entityType),
        await createV1('Hledaný Druhý', entityType),
        await createV1('Hledaný Třetí', entityType),
      ];
      const search = (body: unknown, query = 'page=1&pageSize=10') => postJson(`/api/v1/search?${query}`, body, 'read');

      const all = await search({ types: [entityType], state: ['RS_NEW', 'RS_APPROVED'] });
      const qr = await v1Document(all, 'qr');
      expect(qr).toContain('<cnt>3</cnt>');
      expect(count(qr, 'fei')).toBe(3);

      const coded = await (await search({ types: [entityType], codes: [records[0]!.entityId, records[2]!.entityUuid] })).text();
      await expectValidV1(coded);
      expect(coded).toContain('<cnt>2</cnt>');
      expect(coded).toContain(`eid="${records[2]!.entityId}"`);
      expect(coded).not.toContain(`eid="${records[1]!.entityId}"`);

      // Pages count from 1 on v1 too: page 1 is the first two, page 2 the third.
      const first = await (await search({ types: [entityType] }, 'page=1&pageSize=2')).text();
      expect(count(first, 'fei')).toBe(2);
      expect(first).toContain(`eid="${records[0]!.entityId}"`);
      const second = await (await search({ types: [entityType] }, 'page=2&pageSize=2')).text();
      expect(second).toContain('<cnt>3</cnt>');
      expect(count(second, 'fei')).toBe(1);
      expect(second).toContain(`eid="${records[2]!.entityId}"`);

      // Every fei carries a lookup (rl/v), as the real v1 client reads it unconditionally.
      expect(count(qr, 'rl')).toBe(3);
      expect(qr).toContain('<rl pt="PT_NAME"><v>Hledaný První</v></rl>');

      // The v1 names stay: lower-case condTypes, CT_CONTAIN; v1 accepts the v2 spellings too.
      const named = await (
        await search({ types: [entityType], cond: { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_CONTAIN', value: 'druhý' } })
      ).text();
      expect(named).toContain('<cnt>1</cnt>');
      expect(named).toContain(`eid="${records[1]!.entityId}"`);
      const upper = await (
        await search({
          types: [entityType],
          cond: { condType: 'VALUE', itemTypes: ['NM_MAIN'], comparator: 'CT_ENDS_WITH', value: 'třetí' },
        })
      ).text();
      expect(upper).toContain(`eid="${records[2]!.entityId}"`);
      expect(upper).toContain('<cnt>1</cnt>');
    });

    it('caps pageSize as v2 does and refuses malformed bodies', async () => {
      const tooLarge = await postJson(`/api/v1/search?page=1&pageSize=${harness.config.SEARCH_MAX_PAGE_SIZE + 1}`, {});
      expect(tooLarge.status).toBe(400);
      expect(await tooLarge.json()).toMatchObject({ code: 'PageSizeTooLarge' });
      const noPageSize = await postJson('/api/v1/search?page=1', {});
      expect(noPageSize.status).toBe(400);
      expect(await noPageSize.json()).toMatchObject({ errors: [{ path: 'query.pageSize', message: 'pageSize is required' }] });
      const pageZero = await postJson('/api/v1/search?page=0&pageSize=10', {});
      expect(pageZero.status).toBe(400);
      expect(await pageZero.json()).toMatchObject({
        errors: [{ path: 'query.page', message: 'pages start at 1: page=1 is the first page' }],
      });
      const badCodes = await postJson('/api/v1/search?page=1&pageSize=10', { codes: ['not an id'] });
      expect(badCodes.status).toBe(400);
      expect(await badCodes.json()).toMatchObject({ code: 'BadRequest' });
    });
  });

  describe('GET /updates/from/{fromTransId} and GET /updates', () => {
    it('lists the records changed after a transaction as upsf, and only the summary when there are too many', async () => {
      const start = await createV1('Výchozí Bod');
      const a = await createV1('Změněný A');
      const b = await createV1('Změněný B');
      const response = await harness.api(`/api/v1/updates/from/${start.trns}`, { as: 'read' });
      const upsf = await v1Document(response, 'upsf');
      expect(upsf).toContain(`<from>${start.trns}</from>`);
      expect(upsf).toContain(`<to>${b.trns}</to>`);
      expect(upsf).toContain('<cnt>2</cnt>');
      expect(upsf).toContain(`eid="${a.entityId}"`);
      expect(upsf).toContain(`eid="${b.entityId}"`);

      await createV1('Změněný C');
      await createV1('Změněný D');
      const tooMany = await (await harness.api(`/api/v1/updates/from/${start.trns}`)).text();
      await expectValidV1(tooMany);
      expect(tooMany).toContain('<cnt>4</cnt>');
      expect(tooMany).not.toContain('<ri ');
    });

    it('answers 404 TransactionNotFound for an unknown transaction', async () => {
      const response = await harness.api(`/api/v1/updates/from/${randomUUID()}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'TransactionNotFound' });
    });

    it('pages the records changed between two transactions as ups, with the v2 page size cap', async () => {
      const start = await createV1('Stránka Start');
      const created = [await createV1('Stránka 1'), await createV1('Stránka 2'), await createV1('Stránka 3')];
      const end = created[2]!.trns;
      const page = async (n: number) => {
        const response = await harness.api(`/api/v1/updates?fromTransId=${start.trns}&toTransId=${end}&page=${n}&pageSize=2`, {
          as: 'read',
        });
        const ups = await v1Document(response, 'ups');
        return [...ups.matchAll(/\beid="(\d+)"/g)].map((match) => match[1]);
      };
      expect([...(await page(1)), ...(await page(2))]).toEqual(created.map((record) => record.entityId));

      const tooLarge = await harness.api(
        `/api/v1/updates?fromTransId=${start.trns}&toTransId=${end}&page=1&pageSize=${harness.config.UPDATES_MAX_PAGE_SIZE + 1}`,
      );
      expect(tooLarge.status).toBe(400);
      expect(await tooLarge.json()).toMatchObject({ code: 'PageSizeTooLarge' });
      expect((await harness.api(`/api/v1/updates?fromTransId=${start.trns}&page=1&pageSize=2`)).status).toBe(400);
      const unknown = await harness.api(`/api/v1/updates?fromTransId=${randomUUID()}&toTransId=${end}&page=1&pageSize=2`);
      expect(unknown.status).toBe(404);
    });
  });
});
