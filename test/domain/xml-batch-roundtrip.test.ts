import { describe, expect, it } from 'vitest';
import { serializeBatch, writeBatch } from '../../domain/xml/batch-writer.ts';
import { BATCH_V1_HEADER, BATCH_V2_COMMANDS, BATCH_V2_HEADER } from '../fixtures/xml/batch-commands.ts';
import { asV1, collect, fixture, fromArray, oneChunk, readAll } from '../fixtures/xml/support.ts';

describe('batch round trip (read, write, read)', () => {
  for (const [version, file] of [
    ['v2', 'batch-v2.xml'],
    ['v1', 'batch-v1.xml'],
  ] as const) {
    it(`keeps every command of the ${version} fixture`, async () => {
      const first = await readAll(oneChunk(fixture(file)));
      const written = serializeBatch(first.summary.header, first.commands, version);
      const second = await readAll(oneChunk(written));
      expect(second.commands).toEqual(first.commands);
      expect(second.summary).toEqual(first.summary);
    });
  }

  it('writes parts (the public name), the default namespace and one updateEntity per command', () => {
    const xml = serializeBatch(BATCH_V2_HEADER, BATCH_V2_COMMANDS, 'v2');
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<batchUpdate xmlns="http://cam.tacr.cz/2025">')).toBe(true);
    expect(xml).toContain('<parts><part partUuid="dec6babf-b64b-4cd0-93af-2d94bf49e6f1" type="PT_NAME">');
    expect(xml).not.toContain('<parst>');
    expect(xml.match(/<updateEntity>/g)).toHaveLength(4);
    // A part without a UUID yet is written without the attribute.
    expect(xml).toContain('<part type="PT_REL" parent="e929f4a4-ffef-42dc-b01a-3a2c59fa4504">');
  });

  it('writes v2 commands as a v1 batch without what v1 lacks', async () => {
    const xml = serializeBatch(BATCH_V2_HEADER, BATCH_V2_COMMANDS, 'v1');
    expect(xml).toContain(
      '<bu xmlns="http://cam.tacr.cz/2019"><inf bid="e0bbba57-752d-4e7e-812a-00b24e956b09"><usr>Jana Nováková</usr></inf>',
    );
    expect(xml).not.toMatch(/metadataRev|addIssue|Participant/);
    const { summary, commands } = await readAll(oneChunk(xml));
    expect(commands).toEqual(asV1(BATCH_V2_COMMANDS));
    expect(summary.header).toEqual(BATCH_V1_HEADER);
  });

  it('writes a v1 sender known only by its person entity as usid', async () => {
    const header = { version: 'v1', sender: { id: '12', name: '12', entityId: 12 } } as const;
    const xml = serializeBatch(header, [], 'v1');
    expect(xml).toContain('<inf><usid>12</usid></inf>');
    expect((await readAll(oneChunk(xml))).summary.header).toEqual(header);
  });
});

describe('writeBatch', () => {
  it('streams the same document as serializeBatch, in bounded chunks', async () => {
    const commands = Array.from({ length: 300 }, () => BATCH_V2_COMMANDS).flat();
    const chunks = await collect(writeBatch(BATCH_V2_HEADER, fromArray(commands), 'v2'));
    expect(chunks.length).toBeGreaterThan(10);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(70_000);
    expect(chunks.join('')).toBe(serializeBatch(BATCH_V2_HEADER, commands, 'v2'));
  });
});
