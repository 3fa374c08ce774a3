import { describe, expect, it } from 'vitest';
import { InvalidXmlError } from '../../domain/errors.ts';
import type { ChangeCommand } from '../../domain/model.ts';
import { readBatch, readBatchInGroups } from '../../domain/xml/batch-reader.ts';
import { BATCH_V1_HEADER, BATCH_V2_COMMANDS, BATCH_V2_HEADER } from '../fixtures/xml/batch-commands.ts';
import { asV1, byteChunks, fixture, oneChunk, readAll } from '../fixtures/xml/support.ts';

const V2 = 'http://cam.tacr.cz/2025';
const V1 = 'http://cam.tacr.cz/2019';

async function rejection(xml: string): Promise<InvalidXmlError> {
  const error = await readAll(oneChunk(xml)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InvalidXmlError);
  return error as InvalidXmlError;
}

function batchV2(body: string): string {
  return `<batchUpdate xmlns="${V2}"><info><sender><id>a</id><name>A</name></sender></info>${body}</batchUpdate>`;
}

describe('readBatch', () => {
  it('reads every change kind and item kind of a v2 batch', async () => {
    const { summary, commands } = await readAll(oneChunk(fixture('batch-v2.xml')));
    expect(commands).toEqual(BATCH_V2_COMMANDS);
    expect(summary).toEqual({ header: BATCH_V2_HEADER, changes: 7, creates: 3, updates: 4 });
  });

  it('reads the same batch from bytes cut at arbitrary points, also inside UTF-8 characters', async () => {
    for (const size of [1, 3, 7, 64]) {
      const { commands } = await readAll(byteChunks(fixture('batch-v2.xml'), size));
      expect(commands).toEqual(BATCH_V2_COMMANDS);
    }
  });

  it('maps a v1 batch to the same commands as far as v1 can express them', async () => {
    const { summary, commands } = await readAll(byteChunks(fixture('batch-v1.xml'), 5));
    expect(summary).toEqual({ header: BATCH_V1_HEADER, changes: 6, creates: 3, updates: 3 });
    expect(commands).toEqual(asV1(BATCH_V2_COMMANDS));
  });

  it('accepts parts where the specification writes parst', async () => {
    const xml = fixture('batch-v2.xml').replaceAll('<parst>', '<parts>').replaceAll('</parst>', '</parts>');
    expect(xml).not.toContain('parst');
    const { commands } = await readAll(oneChunk(xml));
    expect(commands).toEqual(BATCH_V2_COMMANDS);
  });

  it('emits each command as soon as its element closes', async () => {
    const seen: string[] = [];
    async function* source(): AsyncGenerator<string> {
      yield batchV2('<createEntity localId="a" entityType="T"/>');
      seen.push('after the first chunk');
    }
    // The first chunk holds a complete batch, so the command arrives before the generator resumes.
    await readBatch(source(), (command: ChangeCommand) => seen.push(`command ${command.kind}`));
    expect(seen).toEqual(['command create', 'after the first chunk']);
  });

  it('reads a v1 sender given as a person entity', async () => {
    const { summary } = await readAll(oneChunk(`<bu xmlns="${V1}"><inf><usid>12</usid></inf></bu>`));
    expect(summary.header).toEqual({ version: 'v1', sender: { id: '12', name: '12', entityId: 12 } });
    expect(summary.changes).toBe(0);
  });

  it('lets errors of the callback through unchanged', async () => {
    const failure = new Error('stop');
    await expect(
      readBatch(oneChunk(batchV2('<createEntity localId="a" entityType="T"/>')), () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
  });

  describe('rejects with a position', () => {
    it('malformed XML', async () => {
      const error = await rejection(`<batchUpdate xmlns="${V2}">\n  <info>\n    <sender></info>\n</batchUpdate>`);
      expect(error.problems[0]).toMatchObject({ line: 3, column: 19 });
      expect(error.message).toMatch(/close tag/i);
    });

    it('a truncated document', async () => {
      const xml = fixture('batch-v2.xml');
      const error = await rejection(xml.slice(0, xml.indexOf('<updateEntity>') + 20));
      expect(error.problems[0]?.line).toBeGreaterThan(60);
      expect(error.problems[0]?.column).toBeGreaterThan(0);
    });

    it('a document cut inside a tag', async () => {
      const error = await rejection(batchV2('').slice(0, 40));
      expect(error.problems[0]).toMatchObject({ line: 1 });
    });

    it('an empty document', async () => {
      const error = await rejection('');
      expect(error.problems[0]).toMatchObject({ line: 1, column: 1 });
    });

    it('a DOCTYPE, even without entities', async () => {
      const error = await rejection(`<?xml version="1.0"?>\n<!DOCTYPE batchUpdate>\n${batchV2('')}`);
      expect(error.message).toMatch(/DOCTYPE/);
      expect(error.problems[0]?.line).toBe(2);
    });

    it('an entity declaration (billion laughs)', async () => {
      const error = await rejection(
        `<!DOCTYPE b [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n${batchV2('<createEntity localId="x" entityType="&b;"/>')}`,
      );
      expect(error.message).toMatch(/DOCTYPE/);
    });

    it('an undeclared entity reference', async () => {
      const error = await rejection(batchV2('<createEntity localId="x" entityType="&foo;"/>'));
      expect(error.problems[0]?.line).toBe(1);
    });

    it('an unknown element', async () => {
      const error = await rejection(
        batchV2('\n<createEntity localId="a" entityType="T">\n  <parst><part type="PT_NAME"><colour/></part></parst></createEntity>'),
      );
      expect(error.message).toMatch(/unexpected element colour in part/);
      expect(error.problems[0]?.line).toBe(3);
    });

    it('child elements where only text or nothing belongs', async () => {
      const inLeaf = batchV2('<updateEntity><entityRef>a</entityRef><setEntityType>X<b/></setEntityType></updateEntity>');
      expect((await rejection(inLeaf)).message).toMatch(/unexpected element b in setEntityType/);
      const inEmpty = batchV2('<updateEntity><entityRef>a</entityRef><deletePart type="PT_BODY"><items/></deletePart></updateEntity>');
      expect((await rejection(inEmpty)).message).toMatch(/unexpected element items in deletePart/);
    });

    it('an unknown change element', async () => {
      const error = await rejection(batchV2('<updateEntity><entityRef>a</entityRef><paint/></updateEntity>'));
      expect(error.message).toMatch(/paint/);
    });

    it('an element from another namespace', async () => {
      const error = await rejection(batchV2('<x:createEntity xmlns:x="urn:other" localId="a" entityType="T"/>'));
      expect(error.message).toMatch(/namespace/);
    });

    it('a root of the wrong kind or namespace', async () => {
      expect((await rejection(`<entity xmlns="${V2}"/>`)).message).toMatch(/expected a batch/);
      expect((await rejection(`<batchUpdate xmlns="urn:other"/>`)).message).toMatch(/expected a batch/);
      expect((await rejection(`<bu xmlns="${V2}"/>`)).message).toMatch(/expected a batch/);
    });

    it('a batch without info', async () => {
      expect((await rejection(`<batchUpdate xmlns="${V2}"/>`)).message).toMatch(/no info/);
      expect((await rejection(`<batchUpdate xmlns="${V2}"><createEntity localId="a" entityType="T"/></batchUpdate>`)).message).toMatch(
        /must start with info/,
      );
    });

    it('an update without changes', async () => {
      expect((await rejection(batchV2('<updateEntity><entityRef>a</entityRef></updateEntity>'))).message).toMatch(/at least one change/);
    });

    it('a userRef to no earlier user', async () => {
      const body =
        '<updateEntity><entityRef>a</entityRef><addParticipant><role>EDITOR</role><lastChange>2025-01-01T00:00:00</lastChange><userRef>nobody</userRef></addParticipant></updateEntity>';
      expect((await rejection(batchV2(body))).message).toMatch(/userRef nobody/);
    });

    it('bad values: entity ids, booleans, part types', async () => {
      const update = (entity: string) => batchV2(`<updateEntity>${entity}<setEntityType>X</setEntityType></updateEntity>`);
      expect((await rejection(update('<entity localId="a" entityId="4x" rev="r"/>'))).message).toMatch(/integer/);
      expect((await rejection(update('<entity localId="a" entityId="99999999999999999999" rev="r"/>'))).message).toMatch(/out of range/);
      expect((await rejection(update('<entity localId="a" rev="r"/>'))).message).toMatch(/entityId or entityUuid/);
      const part = (inner: string) => batchV2(`<createEntity localId="a" entityType="T"><parst>${inner}</parst></createEntity>`);
      expect((await rejection(part('<part type="PT_NAME"><items><boolean type="B">yes</boolean></items></part>'))).message).toMatch(
        /true or false/,
      );
      expect((await rejection(part('<part type="PT_HEAD"/>'))).message).toMatch(/part type/);
    });

    it('text directly in the root', async () => {
      expect((await rejection(`<batchUpdate xmlns="${V2}">hello</batchUpdate>`)).message).toMatch(/text/);
    });

    it('a second root element', async () => {
      expect((await rejection(`${batchV2('')}<batchUpdate xmlns="${V2}"/>`)).message).toMatch(/one root/);
    });

    it('characters XML 1.0 forbids', async () => {
      const error = await rejection(
        batchV2(
          '<createEntity localId="a" entityType="T"><parst><part type="PT_NAME"><items><string type="S">a\u0001b</string></items></part></parst></createEntity>',
        ),
      );
      expect(error.message).toMatch(/character/);
      expect((await rejection(batchV2('<createEntity localId="a" entityType="T\u0008"/>'))).message).toMatch(/character/);
      expect((await rejection(batchV2('<createEntity localId="a" entityType="&#1;"/>'))).problems).toHaveLength(1);
    });

    it('bytes that are not UTF-8', async () => {
      const prefix = new TextEncoder().encode(batchV2('<createEntity localId="a" entityType="'));
      const bytes = new Uint8Array([...prefix, 0xc3, 0x28, ...new TextEncoder().encode('"/></batchUpdate>')]);
      async function* source(): AsyncGenerator<Uint8Array> {
        yield bytes;
      }
      const error = await readAll(source()).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(InvalidXmlError);
      expect((error as InvalidXmlError).message).toMatch(/UTF-8/);
    });

    it('a declared encoding other than UTF-8', async () => {
      const error = await rejection(`<?xml version="1.0" encoding="windows-1250"?>${batchV2('')}`);
      expect(error.message).toMatch(/windows-1250/);
    });
  });
});

describe('readBatchInGroups', () => {
  it('hands over the same commands in groups of the given size, awaiting each group before reading on', async () => {
    const groups: number[] = [];
    const commands: ChangeCommand[] = [];
    let pending = false;
    const summary = await readBatchInGroups(byteChunks(fixture('batch-v2.xml'), 7), 2, async (group) => {
      expect(pending).toBe(false);
      pending = true;
      groups.push(group.length);
      commands.push(...group);
      await new Promise((resolve) => setTimeout(resolve, 1));
      pending = false;
    });
    expect(commands).toEqual(BATCH_V2_COMMANDS);
    expect(groups.slice(0, -1).every((size) => size >= 2)).toBe(true);
    expect(groups.reduce((sum, size) => sum + size, 0)).toBe(7);
    expect(summary).toEqual({ header: BATCH_V2_HEADER, changes: 7, creates: 3, updates: 4 });
  });
});
