import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/lib/generate.ts';
import {
  ITEM_KINDS,
  PART_TYPES,
  type EntityRecord,
  type Item,
  type ItemKind,
  type Part,
  type UserInfo,
  type XmlVersion,
} from '../../domain/model.ts';
import { byteStringElementWriter, entityElementWriter, v2DocumentRevision } from '../../domain/xml/compiled-entity-writer.ts';
import { serializeEntity, writeEntities } from '../../domain/xml/entity-writer.ts';
import { serializeEntityByMarkup, serializeEntityElement } from '../support/markup-entity-writer.ts';
import { collect, sampleRecord, uuid } from '../fixtures/xml/support.ts';

// The snapshot export writes entities with the compiled writer; the Markup
// writer (serializeEntityElement, serializeEntityByMarkup) is the reference; the entity reads (serializeEntity) use the compiled writer too. Every record
// must come out byte for byte the same, whatever it holds.

const VERSIONS: XmlVersion[] = ['v2', 'v1'];

/** Text that exercises the escaping: markup, quotes, whitespace, Czech, astral characters, and plain. */
const TEXTS = [
  'Novák',
  'Žluťoučký kůň úpěl ďábelské ódy',
  'A & B',
  '<tag>',
  'a > b',
  '"quoted"',
  "it's",
  'tab\there',
  'line\nfeed',
  'carriage\r\nreturn',
  'emoji 😀 and 𝄞',
  '',
  ' leading and trailing ',
  ']]>',
  '&amp; already',
  '\u007f\u0085\u00a0',
  'PT_NAME',
];

function recordGenerator(seed: number) {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const maybe = <T>(value: T): T | undefined => (random() < 0.5 ? value : undefined);
  let counter = 0;
  const id = () => uuid(seed, (counter += 1));

  const user = (): UserInfo => ({
    id: pick(TEXTS),
    name: pick(TEXTS),
    ...(random() < 0.5 ? { uuid: id() } : {}),
    ...(random() < 0.3 ? { entityId: Math.floor(random() * 1e6) } : {}),
    ...(random() < 0.3 ? { institution: pick(TEXTS) } : {}),
  });

  const item = (kind: ItemKind): Item => {
    const common = {
      type: pick(TEXTS) || 'T',
      ...(random() < 0.4 ? { spec: pick(TEXTS) } : {}),
      ...(random() < 0.3 ? { uuid: id() } : {}),
    };
    switch (kind) {
      case 'string':
        return { ...common, kind, value: pick(TEXTS) };
      case 'enum':
        return { ...common, kind };
      case 'int':
        return { ...common, kind, value: String(Math.floor(random() * 1e9) - 5e8) };
      case 'boolean':
        return { ...common, kind, value: random() < 0.5 };
      case 'binary':
        return { ...common, kind, base64: 'iVBORw0KGgo=' };
      case 'unitDate':
        return {
          ...common,
          kind,
          from: '1850-01-01T00:00:00',
          to: pick(['1905-12-31T23:59:59', 'a"b<c']),
          ...(random() < 0.5 ? { format: pick(['Y', 'Y-Y', 'D']) } : {}),
          ...(random() < 0.3 ? { fromEstimate: random() < 0.5 } : {}),
          ...(random() < 0.3 ? { toEstimate: random() < 0.5 } : {}),
        };
      case 'link':
        return { ...common, kind, url: `https://example.org/?a=${pick(TEXTS)}&b=2`, ...(random() < 0.5 ? { name: pick(TEXTS) } : {}) };
      case 'entityRef':
        return {
          ...common,
          kind,
          target:
            random() < 0.7
              ? {
                  kind: 'stored',
                  ref: {
                    ...(random() < 0.7 ? { entityId: Math.floor(random() * 1e6) } : {}),
                    ...(random() < 0.7 ? { entityUuid: id() } : {}),
                  },
                }
              : { kind: 'local', localId: pick(TEXTS) },
        };
    }
  };

  const items = (count: number): Item[] => Array.from({ length: count }, () => item(pick(ITEM_KINDS)));

  const part = (): Part => ({
    partUuid: random() < 0.1 ? '' : id(),
    type: pick(PART_TYPES),
    ...(random() < 0.2 ? { parent: id() } : {}),
    items: items(Math.floor(random() * 6)),
    ...(random() < 0.3 ? { extensionItems: items(Math.floor(random() * 3)) } : {}),
  });

  return (n: number): EntityRecord => {
    const parts = Array.from({ length: Math.floor(random() * 5) }, part);
    const names = parts.filter((value) => value.type === 'PT_NAME');
    return {
      entityId: n,
      entityUuid: id(),
      entityType: pick(TEXTS),
      state: pick(['ERS_NEW', 'ERS_APPROVED', 'ERS_INVALID', 'ERS_REPLACED'] as const),
      ...(random() < 0.2 ? { replacedBy: { ...(random() < 0.7 ? { entityId: n + 1 } : {}), entityUuid: id() } } : {}),
      revision: {
        rev: id(),
        metadataRev: id(),
        ...(random() < 0.5 ? { prevRev: id() } : {}),
        ...(random() < 0.7 ? { user: user() } : {}),
        createdAt: pick(['2025-03-01T10:15:00Z', '2025-03-01T10:15:00.123Z', '2025-03-01T11:15:00+01:00', '2025-03-01T10:15:00']),
        participants: Array.from({ length: Math.floor(random() * 3) }, () => ({
          role: pick(['EDITOR', 'APPROVER'] as const),
          lastChange: '2025-03-02T10:15:00.5Z',
          user: user(),
        })),
      },
      ...(names.length > 1 ? { preferredNamePart: maybe(pick(names).partUuid) } : {}),
      parts,
      issues: random() < 0.2 ? sampleRecord(n).issues : [],
    };
  };
}

describe('the compiled entity writer', () => {
  it.each(VERSIONS)('writes every record byte for byte as the Markup writer does (%s)', (version) => {
    const compiled = entityElementWriter(version);
    const generate = recordGenerator(version === 'v2' ? 29 : 30);
    for (let n = 1; n <= 3000; n++) {
      const record = generate(n);
      expect(compiled(record), JSON.stringify(record)).toBe(serializeEntityElement(record, version));
    }
    expect(compiled(sampleRecord(1))).toBe(serializeEntityElement(sampleRecord(1), version));
  });

  it.each(VERSIONS)(
    'is the element of the entity document a GET answers, byte for byte as the Markup writer writes the document (%s)',
    (version) => {
      const generate = recordGenerator(version === 'v2' ? 31 : 32);
      for (let n = 1; n <= 1000; n++) {
        const record = generate(n);
        expect(serializeEntity(record, version), JSON.stringify(record)).toBe(serializeEntityByMarkup(record, version));
      }
      expect(serializeEntity(sampleRecord(1), version)).toBe(serializeEntityByMarkup(sampleRecord(1), version));
      expect(serializeEntity(sampleRecord(1), version)).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<\w+ xmlns="[^"]+" /);
    },
  );

  it('leaves out undefined values and writes other odd values as the Markup writer does', () => {
    const record = sampleRecord(2);
    const odd = {
      ...record,
      revision: { ...record.revision, prevRev: null },
      parts: [
        {
          ...record.parts[0],
          items: [
            { kind: 'string', type: 'T', value: 5 },
            { kind: 'string', type: 'T' },
            { kind: 'unknown', type: 'T' },
          ],
        },
      ],
    } as unknown as EntityRecord;
    for (const version of VERSIONS) {
      expect(entityElementWriter(version)(odd)).toBe(serializeEntityElement(odd, version));
      expect(serializeEntity(odd, version)).toBe(serializeEntityByMarkup(odd, version));
    }
  });

  it('refuses characters XML 1.0 cannot carry, as the Markup writer does', () => {
    for (const bad of ['\u0001', '\uFFFE', '\uD800 lone', 'lone \uDC00']) {
      const record: EntityRecord = { ...sampleRecord(3), entityType: bad };
      expect(() => entityElementWriter('v2')(record)).toThrow(RangeError);
      const inText: EntityRecord = {
        ...sampleRecord(3),
        parts: [{ partUuid: uuid(3), type: 'PT_BODY', items: [{ kind: 'string', type: 'T', value: bad }] }],
      };
      expect(() => entityElementWriter('v2')(inText)).toThrow(RangeError);
      expect(() => serializeEntityElement(inText, 'v2')).toThrow(RangeError);
      expect(() => serializeEntity(inText, 'v2')).toThrow(RangeError);
    }
  });

  it('is what writeEntities streams', async () => {
    const records = [sampleRecord(1), sampleRecord(2)];
    const chunks = await collect(
      writeEntities(
        (async function* () {
          yield* records;
        })(),
        'v2',
      ),
    );
    expect(chunks.slice(1, -1)).toEqual(records.map((record) => serializeEntityElement(record, 'v2')));
  });
});

/** A string's UTF-8 bytes, one per character: the form the export reads records in and writes elements in. */
const byteString = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

describe('the compiled entity writer over byte strings', () => {
  it.each(VERSIONS)('writes the UTF-8 bytes of the exact output for every record (%s)', (version) => {
    const writer = byteStringElementWriter(version);
    const generate = recordGenerator(version === 'v2' ? 31 : 32);
    for (let n = 1; n <= 3000; n++) {
      const record = generate(n);
      expect(writer(byteString(JSON.stringify(record))), JSON.stringify(record)).toBe(byteString(serializeEntityElement(record, version)));
    }
  });

  it('leaves to the exact writer what only it decides: dates beyond ASCII, \\u escapes, U+FFFE and U+FFFF', () => {
    const writer = byteStringElementWriter('v2');
    const record = sampleRecord(4);
    const odd: EntityRecord[] = [
      // Date.parse sees other characters than the text holds; the exact writer decides.
      { ...record, revision: { ...record.revision, createdAt: '2025-03-01T10:15:00 Žluťoučký' } },
      { ...record, revision: { ...record.revision, createdAt: '1 Jan 2020 ž' } },
      { ...record, issues: sampleRecord(5).issues.map((issue) => ({ ...issue, from: '2025 ř 01' })) },
    ];
    for (const value of odd) expect(writer(byteString(JSON.stringify(value)))).toBe(byteString(serializeEntityElement(value, 'v2')));
    for (const bad of ['\uFFFE', 'a \uFFFF b', '\u0001', '\uD800 lone']) {
      const inText: EntityRecord = {
        ...record,
        parts: [{ partUuid: uuid(4), type: 'PT_BODY', items: [{ kind: 'string', type: 'T', value: bad }] }],
      };
      const exactError = (() => {
        try {
          serializeEntityElement(inText, 'v2');
        } catch (error) {
          return error;
        }
        throw new Error(`${JSON.stringify(bad)} was written`);
      })();
      // The same error, message and all (its index counts UTF-16 code units, not bytes).
      expect(() => writer(byteString(JSON.stringify(inText)))).toThrow(exactError as Error);
    }
  });
});

describe('the stored v2 document (entity.document)', () => {
  it('is the same written from the planned record as from the record read back from its JSON, and tells its rev and metadataRev', () => {
    const generate = recordGenerator(31);
    for (let n = 1; n <= 3000; n++) {
      const record = generate(n);
      const document = serializeEntity(record, 'v2');
      // The write path stores the document of the record it has; a GET without one builds it from the stored JSON.
      expect(serializeEntity(JSON.parse(JSON.stringify(record)) as EntityRecord, 'v2'), JSON.stringify(record)).toBe(document);
      expect(v2DocumentRevision(document)).toEqual({ rev: record.revision.rev, metadataRev: record.revision.metadataRev });
    }
  });

  it('tells no revision of a document it cannot read one from', () => {
    const document = serializeEntity(sampleRecord(1), 'v2');
    expect(v2DocumentRevision(document)).toBeDefined();
    expect(v2DocumentRevision('')).toBeUndefined();
    expect(v2DocumentRevision('not a document')).toBeUndefined();
    expect(v2DocumentRevision(document.replace('<metadataRev>', '<other>'))).toBeUndefined();
    expect(v2DocumentRevision(document.replace('</metadataRev>', ''))).toBeUndefined();
    expect(v2DocumentRevision(document.replace('</rev>', ''))).toBeUndefined();
    expect(v2DocumentRevision(document.replace(/<rev>[^<]*</, '<rev>a&amp;b<'))).toBeUndefined();
  });
});
