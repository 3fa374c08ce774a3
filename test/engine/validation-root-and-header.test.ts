import { describe, expect, it } from 'vitest';
import { BatchValidator, validateBatchXml } from '../../engine/validation/index.ts';
import { batchXml, create } from '../support/batches.ts';

// The root start tag is bounded (it is kept and repeated with every slice),
// and the batch UUID is the header's attribute as a parser reads it.

const UUID = '11111111-1111-4111-8111-111111111111';
const declarations = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => `xmlns:${prefix}${index}="urn:example:${prefix}${index}"`).join(' ');

describe('root start tag and header', () => {
  it('reads the batch UUID of v2 and v1 headers, also after 8 KiB of other attributes', async () => {
    const xml = batchXml([create('a', 'x')], { uuid: UUID });
    expect((await validateBatchXml(Buffer.from(xml))).batchUuid).toBe(UUID);
    expect((await validateBatchXml(Buffer.from(batchXml([create('a', 'x')], { uuid: UUID, version: 'v1' })))).batchUuid).toBe(UUID);
    expect((await validateBatchXml(Buffer.from(xml.replace('<info ', `<info ${declarations('p', 300)} `)))).batchUuid).toBe(UUID);
  });

  it('refuses a root start tag over 64 KiB, whole or while it still arrives', async () => {
    const xml = batchXml([create('a', 'x')], { uuid: UUID });
    await expect(validateBatchXml(Buffer.from(xml.replace('<batchUpdate ', `<batchUpdate ${declarations('q', 3000)} `)))).rejects.toThrow(
      /root start tag is longer than the 64 KiB accepted/,
    );
    const validator = new BatchValidator();
    try {
      await validator.push(Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n<batchUpdate xmlns="http://cam.tacr.cz/2025" note="`));
      const attempt = async () => {
        for (let piece = 0; piece < 100; piece += 1) await validator.push(Buffer.alloc(16 * 1024, 'x'));
      };
      await expect(attempt()).rejects.toThrow(/root start tag is longer than the 64 KiB accepted/);
    } finally {
      validator.close();
    }
  });

  it('knows the version once the root is read, before the document ends', async () => {
    const validator = new BatchValidator();
    try {
      const xml = batchXml([create('a', 'x')], { uuid: UUID, version: 'v1' });
      await validator.push(Buffer.from(xml.slice(0, xml.indexOf('>', xml.indexOf('<bu')) + 300)));
      expect(validator.version).toBe('v1');
    } finally {
      validator.close();
    }
  });
});
