import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { chunkedPost } from '../support/chunked-post.ts';
import { startHarness, TEST_TOKENS, type Harness } from '../support/harness.ts';
import { pollUntil } from '../support/poll.ts';

// Documents refused early and cheaply: a root start tag of 10 MiB, and a v1
// batch sent to v2, are refused once their root is read, and a batch with a
// schema error early is no longer stored once it is found, though still
// validated for its list of errors (no COPY of their body is open while the
// client still sends); the batch UUID is the header's attribute as an XML parser reads
// it, however long the tag. An ordinary client's saves meanwhile complete.

const MIB = 1024 * 1024;

describe('documents refused early', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** Connections of the API with a body's COPY open (running, or done in a transaction still open). */
  const openBodyCopies = async () =>
    Number(
      (
        await harness.sql<{ open: string }>(
          `select count(*) as open from pg_stat_activity where datname = current_database() and query ilike 'copy batch_body_chunk%' and state <> 'idle'`,
        )
      )[0]!.open,
    );
  const upload = (path: string) =>
    chunkedPost(new URL(`${harness.baseUrl}${path}`), { authorization: `Bearer ${TEST_TOKENS.write}`, 'content-type': 'application/xml' });
  const ordinarySave = () =>
    harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'admin',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('o', `Ordinary ${randomUUID()}`)]),
    });
  const expectCompleted = async (save: Promise<Response>) => {
    const response = await save;
    expect(response.status).toBe(200);
    expect((await batchEnded(harness, (await response.json()) as string)).status).toBe('COMPLETED');
  };
  const batchesOfWriter = async () => (await harness.sql(`select 1 from batch where submitted_by = 'test-writer'`)).length;

  /** A batch of `bytes` or more: its head, many changes (each its own localId), its tail. */
  const largeBatch = (version: 'v1' | 'v2', bytes: number) => {
    const xml = batchXml([create('c', `Large ${randomUUID()}`)], { version });
    const change = version === 'v2' ? /<createEntity [\s\S]*<\/createEntity>/.exec(xml)![0] : /<ce [\s\S]*<\/ce>/.exec(xml)![0];
    const [head, tail] = [xml.slice(0, xml.indexOf(change)), xml.slice(xml.indexOf(change) + change.length)];
    const count = Math.ceil(bytes / change.length);
    const localId = version === 'v2' ? 'localId="c"' : 'lid="c"';
    const changes = Array.from({ length: count }, (_, index) =>
      change
        .replace(localId, localId.replace('"c"', `"c${index}"`))
        .replace(/partUuid="[^"]+"|pid="[^"]+"/, (attribute) => attribute.replace(/"[^"]+"/, `"${randomUUID()}"`)),
    );
    return { head: Buffer.from(head + changes.join('')), tail: Buffer.from(tail) };
  };

  it('shows a body stored as it arrives while its client still sends (the probe sees a COPY)', async () => {
    const { head } = largeBatch('v2', 16 * MIB);
    const post = upload('/api/v2/batches');
    post.answered.catch(() => undefined);
    post.request.on('error', () => undefined);
    await post.write(head);
    await pollUntil(async () => ((await openBodyCopies()) > 0 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'a COPY of the body being stored',
    });
    post.request.destroy();
    // The cut upload leaves nothing open for the probes that follow.
    await pollUntil(async () => ((await openBodyCopies()) === 0 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the cut upload to end its COPY',
    });
  });

  it('refuses a v1 batch sent to v2 once its root is read, storing none of it, while an ordinary client saves', async () => {
    const before = await batchesOfWriter();
    const { head, tail } = largeBatch('v1', 16 * MIB);
    const post = upload('/api/v2/batches');
    await post.write(head);
    // 16 MiB sent and the client still holds the end: nothing of it is being stored.
    expect(await openBodyCopies()).toBe(0);
    // An ordinary save meanwhile (after the probe: its own small body is stored by a COPY too).
    await expectCompleted(ordinarySave());
    post.request.end(tail);
    const { status, answer } = await post.answered;
    expect(status).toBe(400);
    expect(JSON.parse(answer)).toMatchObject({ code: 'SchemaViolation' });
    expect((JSON.parse(answer) as { detail: string }).detail).toContain('send v1 batches to /api/v1/batches');
    expect(await batchesOfWriter()).toBe(before);
  });

  it('stops storing a batch at its first schema error, still listing its errors, while an ordinary client saves', async () => {
    const before = await batchesOfWriter();
    const { head, tail } = largeBatch('v2', 16 * MIB);
    // The first change breaks the schema (an entity type is a code of at least one character).
    const broken = Buffer.from(head.toString('utf8').replace('entityType="PERSON"', 'entityType=""'));
    const post = upload('/api/v2/batches');
    await post.write(broken);
    expect(await openBodyCopies()).toBe(0);
    await expectCompleted(ordinarySave());
    post.request.end(tail);
    const { status, answer } = await post.answered;
    expect(status).toBe(400);
    const problem = JSON.parse(answer) as { code: string; errors: Array<{ line: number; message: string }> };
    expect(problem.code).toBe('SchemaViolation');
    expect(problem.errors.length).toBeGreaterThanOrEqual(1);
    expect(await batchesOfWriter()).toBe(before);
  });

  it('refuses a root start tag of 10 MiB before the rest is stored, while an ordinary client saves', async () => {
    const before = await batchesOfWriter();
    const xml = batchXml([create('a', `Long root ${randomUUID()}`)]);
    const [open, rest] = [
      xml.slice(0, xml.indexOf('<batchUpdate ') + '<batchUpdate '.length),
      xml.slice(xml.indexOf('<batchUpdate ') + '<batchUpdate '.length),
    ];
    const post = upload('/api/v2/batches');
    await post.write(Buffer.from(`${open}note="${'x'.repeat(10 * MIB)}" `));
    expect(await openBodyCopies()).toBe(0);
    await expectCompleted(ordinarySave());
    post.request.end(Buffer.from(rest));
    const { status, answer } = await post.answered;
    expect(status).toBe(400);
    expect(JSON.parse(answer)).toMatchObject({ code: 'InvalidXml' });
    expect((JSON.parse(answer) as { detail: string }).detail).toContain('root start tag is longer than the 64 KiB accepted');
    expect(await batchesOfWriter()).toBe(before);
  });

  it('takes the batch UUID from the parsed header: after 8 KiB of other attributes, and never from inside a value', async () => {
    const ordinary = ordinarySave();
    const uuid = randomUUID();
    const declarations = Array.from({ length: 300 }, (_, index) => `xmlns:p${index}="urn:example:p${index}"`).join(' ');
    const long = batchXml([create('a', `Long header ${uuid}`)], { uuid }).replace('<info ', `<info ${declarations} `);
    const saved = await harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'write',
      headers: { 'content-type': 'application/xml' },
      body: long,
    });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toBe(uuid);
    expect((await batchEnded(harness, uuid)).status).toBe('COMPLETED');

    // Someone else's batch id inside another attribute's value: never the batch's id.
    const victim = (await (await ordinary).json()) as string;
    const mine = randomUUID();
    const smuggled = batchXml([create('a', `Smuggled ${mine}`)], { uuid: mine }).replace('<info ', `<info xmlns:x=' uuid="${victim}"' `);
    const answer = await harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'write',
      headers: { 'content-type': 'application/xml' },
      body: smuggled,
    });
    expect(answer.status === 400 || (answer.status === 200 && (await answer.json()) === mine)).toBe(true);
    expect((await harness.sql<{ submitted_by: string }>('select submitted_by from batch where id = $1', [victim]))[0]!.submitted_by).toBe(
      'test-admin',
    );
    expect((await batchEnded(harness, victim)).status).toBe('COMPLETED');
  });
});
