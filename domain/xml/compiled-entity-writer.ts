// The entity element of the snapshot export, written at the export's pace:
// every tag is a string fixed once per interface version, values are escaped
// only when they hold a character that needs it, and no attribute lists or
// builders are allocated per element. Its output is byte for byte that of the
// Markup-based writer in entity-writer.ts (test/domain/xml-compiled-entity-writer.test.ts
// compares them); issues and the v1 revision info, rare or slow-path-only,
// are written by that writer itself.

import type { EntityRecord, EntityTarget, Item, Part, Participant, UserInfo, XmlVersion } from '../model.ts';
import { xmlDateTime } from './date-time.ts';
import { escapeAttribute, escapeText } from './escape.ts';
import { Markup } from './markup.ts';
import { vocabularyFor, type Vocabulary } from './vocabulary.ts';
import { V1_ONLY } from './vocabulary-v1.ts';
import { V2_META } from './vocabulary-v2.ts';
import { writeIssue } from './write-metadata.ts';

// A loop over the code units beats a regular expression on values this short
// (codes, UUIDs, names). It sends to the exact escape function every value
// holding a character that function changes or refuses, and a few more (any
// control character, any surrogate), which that function then handles exactly.

/** Whether escapeText might change or refuse the value. */
function needsTextEscape(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (code < 0x20 || code === 0x26 || code === 0x3c || code === 0x3e || (code >= 0xd800 && (code <= 0xdfff || code >= 0xfffe)))
      return true;
  }
  return false;
}

/** Whether escapeAttribute might change or refuse the value: the same characters and the quotes. */
function needsAttributeEscape(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (
      code < 0x20 ||
      code === 0x22 ||
      code === 0x26 ||
      code === 0x27 ||
      code === 0x3c ||
      code === 0x3e ||
      (code >= 0xd800 && (code <= 0xdfff || code >= 0xfffe))
    ) {
      return true;
    }
  }
  return false;
}

// Values are formatted as Markup formats them (String() of anything but a
// string), so even a stored null reads the same on both paths.
function text(value: unknown): string {
  const string = typeof value === 'string' ? value : String(value);
  return needsTextEscape(string) ? escapeText(string) : string;
}

function attribute(value: unknown): string {
  const string = typeof value === 'string' ? value : String(value);
  return needsAttributeEscape(string) ? escapeAttribute(string) : string;
}

/** ` name="value"`, or nothing for an undefined value. */
type AttributeWriter = (value: unknown) => string;
function attributeWriter(name: string): AttributeWriter {
  const prefix = ` ${name}="`;
  return (value) => (value === undefined ? '' : `${prefix}${attribute(value)}"`);
}

/** `<name>value</name>`, or nothing for an undefined value. */
type LeafWriter = (value: unknown) => string;
function leafWriter(name: string): LeafWriter {
  const open = `<${name}>`;
  const close = `</${name}>`;
  return (value) => (value === undefined ? '' : `${open}${text(value)}${close}`);
}

export type EntityElementWriter = (record: EntityRecord) => string;

const writers = new Map<XmlVersion, EntityElementWriter>();

/** The writer of one entity element (no XML declaration) in the given version. */
export function entityElementWriter(version: XmlVersion): EntityElementWriter {
  let writer = writers.get(version);
  if (writer === undefined) {
    writer = compile(vocabularyFor(version), xmlDateTime);
    writers.set(version, writer);
  }
  return writer;
}

// ---- records as byte strings ----
//
// A byte string holds UTF-8 bytes, one per character (their Latin-1
// decoding). Parsed from a record's JSON text in that form, a record has every
// value in that form too, and the compiled writer, run over it, writes its
// usual output in that form: the writer only ever looks for ASCII characters
// (markup, quotes, controls), which a byte string keeps as they are, and
// copies the rest. The form is what the export reads and writes (no UTF-8
// decoding, no encoding, one byte per character in memory). Where the
// writer would look at more than ASCII, the record is written the exact way
// instead: a U+FFFE or U+FFFF (refused), any \u escape in the JSON text, a
// date-time with other than ASCII characters (parsed as a date), issues
// whose date-times are such, and any value the writer refuses (to throw the
// exact error).

/** A record needs the exact writer (thrown inside the byte-string writer, caught at its top). */
const EXACT = Symbol('exact writer');

function asciiOnly(value: string | undefined): string | undefined {
  if (value !== undefined && NON_ASCII.test(value)) throw EXACT;
  return value;
}
const NON_ASCII = /[\u0080-\uffff]/;

/** xmlDateTime of a byte string: the same result, ASCII values only. */
function byteStringDateTime(value: string | undefined): string | undefined {
  return xmlDateTime(asciiOnly(value));
}

/**
 * The entity element, in the given version, of a record given as its JSON
 * text in byte-string form, written in byte-string form: encoded as Latin-1,
 * the result is entityElementWriter's output encoded as UTF-8, byte for byte
 * (test/domain/xml-compiled-entity-writer.test.ts).
 */
export function byteStringElementWriter(version: XmlVersion): (jsonBytes: string) => string {
  const exact = entityElementWriter(version);
  const fast = compile(vocabularyFor(version), byteStringDateTime);
  const written = (jsonBytes: string): string => {
    // UTF-8 of U+FFFE and U+FFFF starts EF BF; PostgreSQL writes \u only for control characters.
    if (jsonBytes.indexOf('\xef\xbf') >= 0 || jsonBytes.indexOf('\\u') >= 0) throw EXACT;
    const record = JSON.parse(jsonBytes) as EntityRecord;
    for (const issue of record.issues) {
      asciiOnly(issue.from);
      asciiOnly(issue.status?.updated);
    }
    return fast(record);
  };
  return (jsonBytes) => {
    try {
      return written(jsonBytes);
    } catch {
      const text = Buffer.from(jsonBytes, 'latin1').toString('utf8');
      return Buffer.from(exact(JSON.parse(text) as EntityRecord), 'utf8').toString('latin1');
    }
  };
}

function compile(vocab: Vocabulary, dateTime: typeof xmlDateTime): EntityElementWriter {
  const root = vocab.root.entity;
  const entityId = attributeWriter(vocab.id.entityId);
  const entityUuid = attributeWriter(vocab.id.entityUuid);
  const entityType = attributeWriter(vocab.entity.entityType);
  const state = attributeWriter(vocab.entity.state);
  const replacedById = attributeWriter(V1_ONLY.replacedById);
  const replacedByUuid = attributeWriter(V1_ONLY.replacedByUuid);
  const rootOpen = `<${root}`;
  const rootClose = `</${root}>`;
  const revisionInfo = vocab.version === 'v2' ? revisionInfoV2(vocab, dateTime) : revisionInfoV1(vocab, dateTime);
  const parts = partsWriter(vocab);
  const issuesOpen = `<${V2_META.issues}>`;
  const issuesClose = `</${V2_META.issues}>`;
  const replacedByOpen = `<${V2_META.replacedBy}`;

  return (record) => {
    let xml = rootOpen + entityId(record.entityId) + entityUuid(record.entityUuid) + entityType(record.entityType) + state(record.state);
    if (vocab.version === 'v1') xml += replacedById(record.replacedBy?.entityId) + replacedByUuid(record.replacedBy?.entityUuid);
    xml += `>${revisionInfo(record)}${parts(record)}`;
    if (vocab.version === 'v2') {
      if (record.issues.length > 0) {
        const out = new Markup();
        for (const issue of record.issues) writeIssue(out, V2_META.issue, issue, issue);
        xml += issuesOpen + out.take() + issuesClose;
      }
      if (record.replacedBy !== undefined)
        xml += `${replacedByOpen}${entityId(record.replacedBy.entityId)}${entityUuid(record.replacedBy.entityUuid)}/>`;
    }
    return xml + rootClose;
  };
}

function revisionInfoV2(vocab: Vocabulary, dateTime: typeof xmlDateTime): (record: EntityRecord) => string {
  const names = vocab.entity;
  const open = `<${names.revision}>`;
  const close = `</${names.revision}>`;
  const rev = leafWriter(names.rev);
  const metadataRev = leafWriter(V2_META.metadataRev);
  const prevRev = leafWriter(V2_META.prevRev);
  const createdAt = leafWriter(names.createdAt);
  const user = userWriter(V2_META.user);
  const participantOpen = `<${V2_META.participant}>`;
  const participantClose = `</${V2_META.participant}>`;
  const role = leafWriter('role');
  const lastChange = leafWriter('lastChange');
  const participant = (value: Participant) =>
    participantOpen + role(value.role) + lastChange(dateTime(value.lastChange)) + user(value.user) + participantClose;

  return ({ revision }) => {
    let xml = open + rev(revision.rev) + metadataRev(revision.metadataRev) + prevRev(revision.prevRev);
    if (revision.user !== undefined) xml += user(revision.user);
    xml += createdAt(dateTime(revision.createdAt));
    for (const value of revision.participants) xml += participant(value);
    return xml + close;
  };
}

/** v1 RevInfo, as entity-writer.ts writes it (v1 exports are not the hot path). */
function revisionInfoV1(vocab: Vocabulary, dateTime: typeof xmlDateTime): (record: EntityRecord) => string {
  const names = vocab.entity;
  return ({ revision: { rev, user, createdAt } }) => {
    const out = new Markup();
    out.open(names.revision).leaf(names.rev, rev).leaf(V1_ONLY.userName, user?.name);
    if (user?.entityId !== undefined) out.empty(V1_ONLY.userEntity, [[vocab.id.entityId, user.entityId]]);
    return out.leaf(names.createdAt, dateTime(createdAt)).close(names.revision).take();
  };
}

function userWriter(name: string): (user: UserInfo) => string {
  const open = `<${name}>`;
  const close = `</${name}>`;
  const id = leafWriter('id');
  const uuid = leafWriter('uuid');
  const userName = leafWriter('name');
  const entityId = leafWriter('entityId');
  const institution = leafWriter('institution');
  return (user) =>
    open + id(user.id) + uuid(user.uuid) + userName(user.name) + entityId(user.entityId) + institution(user.institution) + close;
}

function partsWriter(vocab: Vocabulary): (record: EntityRecord) => string {
  const [partsName] = vocab.entity.parts;
  const partsOpen = `<${partsName}>`;
  const partsClose = `</${partsName}>`;
  const partOpen = `<${vocab.part.element}`;
  const partClose = `</${vocab.part.element}>`;
  const partUuid = attributeWriter(vocab.part.partUuid);
  const partType = attributeWriter(vocab.part.type);
  const parent = attributeWriter(vocab.part.parent);
  const items = itemListWriter(vocab.part.items, vocab);
  const extensionItems = itemListWriter(vocab.part.extensionItems, vocab);
  const part = (value: Part) =>
    // '' stands for "no UUID yet", written as no attribute (write-items.ts).
    partOpen +
    partUuid(value.partUuid === '' ? undefined : value.partUuid) +
    partType(value.type) +
    parent(value.parent) +
    '>' +
    items(value.items) +
    extensionItems(value.extensionItems ?? []) +
    partClose;

  return (record) => {
    const ordered = partsInOutputOrder(record);
    if (ordered.length === 0) return '';
    let xml = partsOpen;
    for (const value of ordered) xml += part(value);
    return xml + partsClose;
  };
}

function itemListWriter(name: string, vocab: Vocabulary): (items: readonly Item[]) => string {
  const open = `<${name}>`;
  const close = `</${name}>`;
  const item = itemWriter(vocab);
  return (items) => {
    if (items.length === 0) return '';
    let xml = open;
    for (const value of items) xml += item(value);
    return xml + close;
  };
}

function itemWriter(vocab: Vocabulary): (item: Item) => string {
  const names = vocab.item;
  const type = attributeWriter(names.type);
  const spec = attributeWriter(names.spec);
  const uuid = attributeWriter(names.uuid);
  const from = attributeWriter(names.from);
  const to = attributeWriter(names.to);
  const format = attributeWriter(names.format);
  const fromEstimate = attributeWriter(names.fromEstimate);
  const toEstimate = attributeWriter(names.toEstimate);
  const url = leafWriter(names.url);
  const linkName = leafWriter(names.linkName);
  const localTarget = leafWriter(names.localTarget);
  const storedTargetOpen = `<${names.storedTarget}`;
  const entityId = attributeWriter(vocab.id.entityId);
  const entityUuid = attributeWriter(vocab.id.entityUuid);
  /** An element holding only text: nothing at all for an undefined value, as Markup.leaf. */
  const leaf = (name: string) => {
    const open = `<${name}`;
    const close = `</${name}>`;
    return (item: Item, value: unknown) =>
      value === undefined ? '' : `${open}${type(item.type)}${spec(item.spec)}${uuid(item.uuid)}>${text(value)}${close}`;
  };
  const string = leaf(names.string);
  const int = leaf(names.int);
  const boolean = leaf(names.boolean);
  const binary = leaf(names.binary);
  const enumOpen = `<${names.enum}`;
  const unitDateOpen = `<${names.unitDate}`;
  const linkOpen = `<${names.link}`;
  const linkClose = `</${names.link}>`;
  const entityRefOpen = `<${names.entityRef}`;
  const entityRefClose = `</${names.entityRef}>`;
  const target = (value: EntityTarget) =>
    value.kind === 'stored'
      ? `${storedTargetOpen}${entityId(value.ref.entityId)}${entityUuid(value.ref.entityUuid)}/>`
      : localTarget(value.localId);

  return (item) => {
    switch (item.kind) {
      case 'string':
        return string(item, item.value);
      case 'enum':
        return `${enumOpen}${type(item.type)}${spec(item.spec)}${uuid(item.uuid)}/>`;
      case 'int':
        return int(item, item.value);
      case 'boolean':
        return boolean(item, item.value);
      case 'binary':
        return binary(item, item.base64);
      case 'unitDate':
        return (
          unitDateOpen +
          type(item.type) +
          spec(item.spec) +
          uuid(item.uuid) +
          from(item.from) +
          to(item.to) +
          format(item.format) +
          fromEstimate(item.fromEstimate) +
          toEstimate(item.toEstimate) +
          '/>'
        );
      case 'link':
        return `${linkOpen}${type(item.type)}${spec(item.spec)}${uuid(item.uuid)}>${url(item.url)}${linkName(item.name)}${linkClose}`;
      case 'entityRef':
        return `${entityRefOpen}${type(item.type)}${spec(item.spec)}${uuid(item.uuid)}>${target(item.target)}${entityRefClose}`;
      default:
        // A kind this version does not know is left out, as Markup's writer leaves it out.
        return '';
    }
  };
}

/**
 * The formats have no field for the preferred name: a reader takes the first
 * PT_NAME part. So the preferred part is moved ahead of the other names.
 */
export function partsInOutputOrder(record: EntityRecord): readonly Part[] {
  const { parts, preferredNamePart } = record;
  if (preferredNamePart === undefined) return parts;
  const preferred = parts.findIndex((part) => part.type === 'PT_NAME' && part.partUuid === preferredNamePart);
  const firstName = parts.findIndex((part) => part.type === 'PT_NAME');
  if (preferred <= firstName) return parts;
  const ordered = parts.filter((_, index) => index !== preferred);
  ordered.splice(firstName, 0, parts[preferred] as Part);
  return ordered;
}

// ---- stored documents ----

const REV_OPEN = `<${vocabularyFor('v2').entity.rev}>`;
const REV_CLOSE = `</${vocabularyFor('v2').entity.rev}>`;
const METADATA_REV_OPEN = `<${V2_META.metadataRev}>`;
const METADATA_REV_CLOSE = `</${V2_META.metadataRev}>`;

/**
 * The rev and metadataRev of a v2 entity document as serializeEntity writes
 * it (a document stored beside its record): the text of its first rev and
 * metadataRev elements, which are the revision's, the root's first child (no
 * attribute value before them holds a `<`, the writer escapes it). Undefined
 * when the document has no such elements or either value holds an escaped
 * character (revs are UUIDs: never, but then the text would not be the value).
 */
export function v2DocumentRevision(document: string): { rev: string; metadataRev: string } | undefined {
  const revAt = document.indexOf(REV_OPEN);
  if (revAt < 0) return undefined;
  const revEnd = document.indexOf(REV_CLOSE, revAt);
  if (revEnd < 0 || !document.startsWith(METADATA_REV_OPEN, revEnd + REV_CLOSE.length)) return undefined;
  const metadataAt = revEnd + REV_CLOSE.length + METADATA_REV_OPEN.length;
  const metadataEnd = document.indexOf(METADATA_REV_CLOSE, metadataAt);
  if (metadataEnd < 0) return undefined;
  const rev = document.slice(revAt + REV_OPEN.length, revEnd);
  const metadataRev = document.slice(metadataAt, metadataEnd);
  if (rev.includes('&') || metadataRev.includes('&') || rev.includes('<') || metadataRev.includes('<')) return undefined;
  return { rev, metadataRev };
}
