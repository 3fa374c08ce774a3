import { describe, expect, it } from 'vitest';
import { binaryCopyTexts, type RecordTexts } from '../../db/export-records.ts';

// The snapshot export reads records by binary COPY, cut into chunks wherever
// the socket cut them: every row must come out whole, whatever the cuts.

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

function binaryCopy(texts: readonly string[], extension = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(8);
  header.writeInt32BE(extension.length, 4);
  const rows = texts.map((text) => {
    const bytes = Buffer.from(text, 'utf8');
    const head = Buffer.alloc(6);
    head.writeInt16BE(1, 0);
    head.writeInt32BE(bytes.length, 2);
    return Buffer.concat([head, bytes]);
  });
  return Buffer.concat([SIGNATURE, header, extension, ...rows, Buffer.from([0xff, 0xff])]);
}

async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  // Each chunk its own copy, as the socket gives them.
  for (let offset = 0; offset < bytes.length; offset += size) yield Buffer.from(bytes.subarray(offset, offset + size));
}

async function texts(pages: AsyncIterable<RecordTexts>): Promise<string[]> {
  const out: string[] = [];
  for await (const page of pages)
    for (let i = 0; i < page.starts.length; i++) out.push(page.bytes.toString('utf8', page.starts[i], page.ends[i]));
  return out;
}

describe('the rows of a binary COPY', () => {
  const rows = ['{"a":1}', '', '{"name":"Žluťoučký kůň 😀"}', 'x'.repeat(300), '{"b":"\\\\u0001"}', '{}'];
  const data = binaryCopy(rows, Buffer.from('ext'));

  it('come out whole and in order, whatever the size of the chunks', async () => {
    for (let size = 1; size <= data.length; size++)
      expect(await texts(binaryCopyTexts(chunksOf(data, size))), `chunks of ${size}`).toEqual(rows);
  });

  it('fail when the data ends inside a row or without its trailer, or is not binary COPY', async () => {
    for (const cut of [5, 20, data.length - 10, data.length - 1]) {
      await expect(texts(binaryCopyTexts(chunksOf(data.subarray(0, cut), 7)))).rejects.toThrow(/COPY/);
    }
    await expect(texts(binaryCopyTexts(chunksOf(Buffer.from('{"a":1}\n'.repeat(5)), 64)))).rejects.toThrow(/COPY/);
  });
});
