import { describe, expect, it } from 'vitest';
import type { EntityRecord } from '../../domain/model.ts';
import { readEntity } from '../support/entity-reader.ts';
import { partsInOutputOrder } from '../../domain/xml/compiled-entity-writer.ts';
import { serializeEntity, writeEntities } from '../../domain/xml/entity-writer.ts';
import { asV1Record, collect, sampleRecord } from '../fixtures/xml/support.ts';

async function* records(count: number): AsyncGenerator<EntityRecord> {
  for (let n = 1; n <= count; n++) yield sampleRecord(n);
}

describe('serializeEntity', () => {
  it('writes a v2 entity document that reads back to the same record', () => {
    const record = sampleRecord(5);
    const xml = serializeEntity(record, 'v2');
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<entity xmlns="http://cam.tacr.cz/2025" entityId="5"')).toBe(true);
    expect(xml).toContain('<parts>');
    expect(readEntity(xml)).toEqual(record);
  });

  it('writes a v1 document without issues, participants and metadata revision', () => {
    const record: EntityRecord = {
      ...sampleRecord(6),
      state: 'ERS_REPLACED',
      replacedBy: { entityId: 9, entityUuid: sampleRecord(9).entityUuid },
    };
    const xml = serializeEntity(record, 'v1');
    expect(xml).toContain(
      `<ent xmlns="http://cam.tacr.cz/2019" eid="6" euid="${record.entityUuid}" ent="PERSON" ens="ERS_REPLACED" reid="9"`,
    );
    expect(xml).toContain('<revi><rid>');
    expect(xml).toContain('<usr>Jana Nováková</usr><usid eid="7"/><modt>2025-03-01T10:15:00Z</modt></revi><prts>');
    expect(xml).not.toMatch(/issue|participant|metadataRev|Petr/);
    expect(readEntity(xml)).toEqual(asV1Record(record));
  });

  it('writes replacedBy and leaves out what a record does not have', () => {
    const record: EntityRecord = {
      ...sampleRecord(7),
      replacedBy: { entityId: 8 },
      issues: [],
      parts: [],
      revision: {
        rev: sampleRecord(7).revision.rev,
        metadataRev: sampleRecord(7).revision.metadataRev,
        createdAt: '2025-01-01T00:00:00Z',
        participants: [],
      },
    };
    const xml = serializeEntity(record, 'v2');
    expect(xml).toMatch(/<\/revision><replacedBy entityId="8"\/><\/entity>$/);
    expect(xml).not.toMatch(/<parts|<issues|<user|<prevRev/);
    expect(readEntity(xml)).toEqual(record);
  });

  it('puts the preferred name first among the names, since the formats have no field for it', () => {
    const record = sampleRecord(3);
    const [first, second] = record.parts;
    const preferred = { ...record, preferredNamePart: second?.partUuid };
    expect(partsInOutputOrder(preferred).map((part) => part.partUuid)).toEqual(
      [second, first, ...record.parts.slice(2)].map((part) => part?.partUuid),
    );
    expect(partsInOutputOrder({ ...record, preferredNamePart: first?.partUuid })).toBe(record.parts);
    const read = readEntity(serializeEntity(preferred, 'v2'));
    expect(read.parts[0]?.partUuid).toBe(second?.partUuid);
  });

  it('escapes markup characters and keeps Czech text as UTF-8', () => {
    const xml = serializeEntity(sampleRecord(1), 'v2');
    expect(xml).toContain('malíř &amp; grafik &lt;"Žluťoučký kůň"&gt; \'úpěl\'');
    expect(xml).toContain('url>https://example.org/?a=1&amp;b=2</url>');
    const record = sampleRecord(1);
    const quoted: EntityRecord = { ...record, entityType: 'A"B\'C<&>\tD' };
    const attribute = serializeEntity(quoted, 'v2');
    expect(attribute).toContain('entityType="A&quot;B&apos;C&lt;&amp;&gt;&#9;D"');
    expect(readEntity(attribute).entityType).toBe('A"B\'C<&>\tD');
  });

  it('refuses characters XML 1.0 cannot carry', () => {
    const record = sampleRecord(1);
    const broken: EntityRecord = {
      ...record,
      parts: [{ partUuid: 'x', type: 'PT_NAME', items: [{ kind: 'string', type: 'S', value: 'bell\u0007' }] }],
    };
    expect(() => serializeEntity(broken, 'v2')).toThrow(RangeError);
  });
});

describe('writeEntities', () => {
  it('streams 10,000 records in many small chunks', async () => {
    const chunks = await collect(writeEntities(records(10_000), 'v2'));
    expect(chunks.length).toBe(10_002);
    const largest = Math.max(...chunks.map((chunk) => chunk.length));
    expect(largest).toBeLessThan(8_000);
    expect(chunks[0]).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<entities xmlns="http://cam.tacr.cz/2025">');
    expect(chunks.at(-1)).toBe('</entities>');
    expect(chunks[1]?.startsWith('<entity entityId="1" ')).toBe(true);
    // A generous limit: on a loaded 2-core machine building and writing 10,000 records takes several seconds.
  }, 60_000);

  it('yields the first chunk before the source is exhausted', async () => {
    let produced = 0;
    async function* slow(): AsyncGenerator<EntityRecord> {
      for (let n = 1; n <= 3; n++) {
        produced = n;
        yield sampleRecord(n);
      }
    }
    const iterator = writeEntities(slow(), 'v1')[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toContain('<ents xmlns="http://cam.tacr.cz/2019">');
    expect((await iterator.next()).value).toMatch(/^<ent eid="1"/);
    expect(produced).toBe(1);
  });

  it('writes an empty collection', async () => {
    expect((await collect(writeEntities(records(0), 'v1'))).join('')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<ents xmlns="http://cam.tacr.cz/2019"></ents>',
    );
  });
});
