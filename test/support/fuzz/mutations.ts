// Damage done to well-formed bodies: byte flips, truncation, insertions of
// the constructs parsers are attacked with (DTDs, entities, deep nesting,
// invalid UTF-8), and for JSON values subtrees of the wrong type or depth.
import fc from 'fast-check';

type Mutation = (body: Buffer) => Buffer;

const DEEP = 2000;
/** The validator refuses elements nested deeper than 256 levels: just within, and just beyond. */
const nestedElements = (depth: number) => `${'<n>'.repeat(depth)}${'</n>'.repeat(depth)}`;
const lols = Array.from({ length: 9 }, (_, level) => `<!ENTITY lol${level + 1} "${`&lol${level};`.repeat(10)}">`).join('');

/** Constructs a parser must refuse or survive, spliced into a document anywhere. */
const XML_FRAGMENTS = [
  '<!DOCTYPE batchUpdate [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
  '<!DOCTYPE bu SYSTEM "http://127.0.0.1:9/evil.dtd">',
  `<!DOCTYPE lolz [<!ENTITY lol0 "lol">${lols}]>`,
  '<!ENTITY x "y">',
  '<!ELEMENT a ANY>',
  '&xxe;',
  '&lol9;',
  '&unknown;',
  '&amp',
  '&#0;',
  '&#x110000;',
  '&#xD800;',
  '&#99999999999999999999;',
  '<![CDATA[<x>]]>',
  ']]>',
  '<!-- -- -->',
  '<?xml version="1.0"?>',
  '<?xml-stylesheet href="http://127.0.0.1:9/x.xsl"?>',
  '<x:y xmlns:x="urn:evil" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:evil http://127.0.0.1:9/e.xsd"/>',
  '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd" parse="text"/>',
  '</batchUpdate>',
  '<batchUpdate>',
  '"',
  '<',
  '>',
  '\u0000',
  '\uFEFF',
  nestedElements(254),
  nestedElements(257),
  nestedElements(DEEP),
  '<n>'.repeat(DEEP),
  `<!--${'padding '.repeat(700)}-->`,
  `<a ${Array.from({ length: 300 }, (_, index) => `a${index}="${index}"`).join(' ')}/>`,
  `<a${' xmlns:p="urn:p"'.repeat(2)}/>`,
];

/** Byte sequences that are not UTF-8: a lone continuation, overlong forms, surrogates, beyond U+10FFFF. */
const INVALID_UTF8 = [
  [0x80],
  [0xff],
  [0xc3, 0x28],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf0, 0x9f, 0x98],
].map((bytes) => Buffer.from(bytes));

const PROLOGS = [
  '<?xml version="1.0" encoding="UTF-16"?>',
  '<?xml version="1.0" encoding="ISO-8859-2"?>',
  '<?xml version="1.0" encoding="EBCDIC-US"?>',
  '<?xml version="1.1"?>',
  '<?xml version="2.0"?>',
  '<?xml encoding="UTF-8"?>',
  '',
].map((prolog) => Buffer.from(prolog));
const BOMS = [
  [0xef, 0xbb, 0xbf],
  [0xfe, 0xff],
  [0xff, 0xfe],
  [0x00, 0x00, 0xfe, 0xff],
].map((bytes) => Buffer.from(bytes));

const at = (position: number, body: Buffer) => position % (body.length + 1);
const splice = (body: Buffer, position: number, insert: Buffer) =>
  Buffer.concat([body.subarray(0, at(position, body)), insert, body.subarray(at(position, body))]);

const byteMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => (body: Buffer) => {
    const copy = Buffer.from(body);
    for (const [position, mask] of flips) if (copy.length > 0) copy[position % copy.length]! ^= mask;
    return copy;
  }),
  fc.nat().map((position) => (body: Buffer) => body.subarray(0, at(position, body))),
  fc.tuple(fc.nat(), fc.constantFrom(...INVALID_UTF8)).map(
    ([position, bytes]) =>
      (body: Buffer) =>
        splice(body, position, bytes),
  ),
  fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 64 })).map(
    ([from, to, length]) =>
      (body: Buffer) =>
        splice(body, to, body.subarray(at(from, body), at(from, body) + length)),
  ),
  fc.tuple(fc.nat(), fc.string({ unit: 'grapheme', maxLength: 20 })).map(
    ([position, text]) =>
      (body: Buffer) =>
        splice(body, position, Buffer.from(text)),
  ),
);

const xmlMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: byteMutation },
  {
    weight: 3,
    arbitrary: fc.tuple(fc.nat(), fc.constantFrom(...XML_FRAGMENTS)).map(
      ([position, fragment]) =>
        (body: Buffer) =>
          splice(body, position, Buffer.from(fragment)),
    ),
  },
  // A DTD is only a DTD before the root element: right after the XML declaration.
  fc
    .constantFrom(...XML_FRAGMENTS.slice(0, 5))
    .map((fragment) => (body: Buffer) => Buffer.from(body.toString('utf8').replace(/^(<\?xml[^>]*\?>)?/, `$1${fragment}`))),
  fc
    .constantFrom(...PROLOGS)
    .map((prolog) => (body: Buffer) => Buffer.from(body.toString('utf8').replace(/^<\?xml[^>]*\?>/, prolog.toString()))),
  fc.constantFrom(...BOMS).map((bom) => (body: Buffer) => Buffer.concat([bom, body])),
);

/** One to three mutations applied in turn. */
export function mutatedXml(document: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc
    .tuple(document, fc.array(xmlMutation, { minLength: 1, maxLength: 3 }))
    .map(([body, mutations]) => mutations.reduce((mutated, mutate) => mutate(mutated), body));
}

export function mutatedBytes(document: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc
    .tuple(document, fc.array(byteMutation, { minLength: 1, maxLength: 3 }))
    .map(([body, mutations]) => mutations.reduce((mutated, mutate) => mutate(mutated), body));
}

/** Any bytes, most of them not text. */
export const randomBytes: fc.Arbitrary<Buffer> = fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes));

const nested = (depth: number, open: string, close: string, inner = '1') => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

/** JSON texts no serializer writes: numbers beyond doubles, duplicate keys, prototype keys, deep nesting. */
export const JSON_TEXTS = [
  '',
  ' ',
  'null',
  '""',
  '0',
  '1e999',
  '-1e999',
  '123456789012345678901234567890',
  '[123456789012345678901234567890]',
  '[9007199254740993]',
  '[1e400]',
  '[-0]',
  '[0.5]',
  '[-1]',
  '["0001"]',
  '["1e3"]',
  '[null]',
  '[true]',
  '[[]]',
  '[{}]',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"a":1,"a":2}',
  '{"types":["A"],"types":{"length":1e9}}',
  '{"cond":{"condType":"__proto__"}}',
  '{"cond":{"condType":"toString"}}',
  '\uFEFF{}',
  '{',
  '[',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  nested(DEEP, '[', ']'),
  nested(DEEP, '{"a":', '}'),
  nested(DEEP, '[', ''),
  `[${'1,'.repeat(3000)}1]`,
].map((text) => Buffer.from(text));

/** A value of the wrong kind for wherever it lands. */
const strayValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    -0,
    0.5,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER + 2,
    2 ** 64,
    '',
    ' ',
    '0',
    'x'.repeat(3000),
    [],
    {},
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.integer({ min: 100, max: 400 }).map((depth) => JSON.parse(nested(depth, '[', ']')) as unknown),
);

type Path = Array<string | number>;

function children(value: unknown): Array<[string | number, unknown]> {
  if (Array.isArray(value)) return value.map((child, index) => [index, child]);
  if (typeof value === 'object' && value !== null) return Object.entries(value);
  return [];
}

function setAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[head!] = setAt(copy[head!], rest, replacement);
  return copy;
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
}

/** Every node with its path, the root first. */
function nodes(value: unknown, path: Path = []): Path[] {
  return [path, ...children(value).flatMap(([key, child]) => nodes(child, [...path, key]))];
}

/**
 * Pumping: a node that has a descendant of the same shape (both objects with
 * a key in common, such as a condition inside a condition) has that
 * descendant replaced by the node itself, again and again, giving valid-looking
 * nesting far beyond any documented depth.
 */
function pump(value: unknown, pick: number, times: number): unknown {
  const objects = nodes(value).filter((path) => children(getAt(value, path)).length > 0 && !Array.isArray(getAt(value, path)));
  const pairs: Array<[Path, Path]> = [];
  for (const outer of objects) {
    const outerKeys = new Set(Object.keys(getAt(value, outer) as object));
    for (const inner of objects) {
      const isDescendant = inner.length > outer.length && outer.every((key, index) => inner[index] === key);
      if (isDescendant && Object.keys(getAt(value, inner) as object).some((key) => outerKeys.has(key))) pairs.push([outer, inner]);
    }
  }
  if (pairs.length === 0) return value;
  const [outer, inner] = pairs[pick % pairs.length]!;
  const relative = inner.slice(outer.length);
  const template = getAt(value, outer);
  let pumped = template;
  for (let round = 0; round < times && JSON.stringify(pumped).length < 16_000; round += 1) pumped = setAt(template, relative, pumped);
  return setAt(value, outer, pumped);
}

/** A JSON value with one subtree replaced by a stray value, or pumped deep. */
export function mutatedJson(value: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.tuple(value, fc.nat(), strayValue).map(([original, pick, stray]) => {
        const all = nodes(original);
        return setAt(original, all[pick % all.length]!, stray);
      }),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(value, fc.nat(), fc.integer({ min: 1, max: 200 })).map(([original, pick, times]) => pump(original, pick, times)),
    },
  );
}
