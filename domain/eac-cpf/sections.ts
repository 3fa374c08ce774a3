// One pass over a record's parts sorts every item into the EAC-CPF section
// it belongs to (docs/overview.md, "EAC-CPF", holds the table): names into
// identity, identifiers beside them, creation and extinction into the dates
// of existence, descriptions and events into the biographical history,
// references into relations, links into sources, and any other typed value
// into a local description under its own type. Each section is markup
// collected apart, because EAC-CPF orders them differently than the record
// does; a record's sections are the size of the record.

import type { EntityRef, Item, Part, PartType } from '../model.ts';
import { Markup } from '../xml/markup.ts';
import { writeDate, type UnitDate } from './dates.ts';

/** Where a reference to another record points: its page (`/global/{id}`), absolute when the origin is known. */
export function pageIri(origin: string | undefined, ref: EntityRef): string {
  return `${origin ?? ''}/global/${ref.entityId ?? encodeURIComponent(ref.entityUuid ?? '')}`;
}

export interface RecordSections {
  /** `nameEntry` elements, the preferred first. */
  names: string;
  identityIds: string;
  localDescriptions: string;
  places: string;
  creation?: UnitDate;
  extinction?: UnitDate;
  abstract?: string;
  paragraphs: string;
  chronItems: string;
  relations: string;
  sources: string;
}

type ItemOf<Kind extends Item['kind']> = Extract<Item, { kind: Kind }>;

const BRIEF_DESCRIPTION = 'BRIEF_DESC';
const NAME_TYPE = 'NM_TYPE';

/** The text of a typed value with no home of its own in EAC-CPF: an int, a boolean, an enum's spec. */
function valueText(item: Item): string | undefined {
  switch (item.kind) {
    case 'string':
    case 'int':
      return item.value;
    case 'boolean':
      return String(item.value);
    case 'enum':
      return item.spec ?? item.type;
    default:
      return undefined;
  }
}

const nonBlank = (text: string | undefined): text is string => text !== undefined && text.trim() !== '';

export function collectSections(parts: readonly Part[], preferredPart: Part | undefined, origin: string | undefined): RecordSections {
  const names = new Markup();
  const alternativeNames = new Markup();
  const identityIds = new Markup();
  const localDescriptions = new Markup();
  const places = new Markup();
  const paragraphs = new Markup();
  const chronItems = new Markup();
  const relations = new Markup();
  const sources = new Markup();
  const sections: Partial<RecordSections> = {};

  const localDescription = (part: PartType, item: Item) => {
    const localType = `${part}/${item.type}`;
    if (item.kind === 'unitDate') {
      localDescriptions.open('localDescription', [['localType', localType]]).leaf('term', item.type);
      writeDate(localDescriptions, item);
      localDescriptions.close('localDescription');
      return;
    }
    const text = valueText(item);
    if (nonBlank(text))
      localDescriptions
        .open('localDescription', [['localType', localType]])
        .leaf('term', text)
        .close('localDescription');
  };

  const relation = (item: ItemOf<'entityRef'>, date: UnitDate | undefined) => {
    if (item.target.kind !== 'stored') return;
    writeRelation(relations, origin, item.target.ref, item.spec ?? item.type, item.type, date);
  };

  for (const part of parts) {
    const items = part.extensionItems === undefined ? part.items : [...part.items, ...part.extensionItems];
    if (part.type === 'PT_NAME') {
      writeNameEntry(part === preferredPart ? names : alternativeNames, items, part === preferredPart);
      for (const item of items) if (item.kind === 'entityRef') relation(item, undefined);
      continue;
    }
    const dates = items.filter((item): item is UnitDate => item.kind === 'unitDate');
    // A part's first date dates what the part says: a relation, an event, a creation or extinction.
    const partDate = dates[0];
    let eventText = '';
    for (const item of items) {
      switch (item.kind) {
        case 'entityRef':
          relation(item, part.type === 'PT_REL' ? partDate : undefined);
          if ((part.type === 'PT_CRE' || part.type === 'PT_EXT') && item.target.kind === 'stored') {
            const ref = item.target.ref;
            places
              .open('place', [['localType', part.type]])
              .leaf('placeName', String(ref.entityId ?? ref.entityUuid), [['valueURI', pageIri(origin, ref)]])
              .leaf('placeRole', item.spec ?? item.type)
              .close('place');
          }
          break;
        case 'link':
          if (part.type === 'PT_IDENT') identityIds.leaf('identityId', item.url, [['localType', item.type]]);
          else
            sources
              .open('source', [['href', item.url]])
              .leaf('reference', nonBlank(item.name) ? item.name : item.url)
              .close('source');
          break;
        case 'unitDate':
          if (item !== partDate || part.type === 'PT_BODY' || part.type === 'PT_IDENT') localDescription(part.type, item);
          else if (part.type === 'PT_CRE') sections.creation ??= item;
          else if (part.type === 'PT_EXT') sections.extinction ??= item;
          break;
        case 'string':
          if (!nonBlank(item.value)) break;
          if (part.type === 'PT_IDENT') identityIds.leaf('identityId', item.value, [['localType', item.type]]);
          else if (part.type === 'PT_BODY' && item.type === BRIEF_DESCRIPTION && sections.abstract === undefined)
            sections.abstract = item.value;
          else if (part.type === 'PT_EVENT' && partDate !== undefined) eventText += eventText === '' ? item.value : `; ${item.value}`;
          else if (part.type === 'PT_BODY' || part.type === 'PT_EVENT')
            paragraphs
              .open('p')
              .leaf('span', item.value, [['localType', item.type]])
              .close('p');
          else localDescription(part.type, item);
          break;
        case 'int':
          if (part.type === 'PT_IDENT') identityIds.leaf('identityId', item.value, [['localType', item.type]]);
          else localDescription(part.type, item);
          break;
        case 'enum':
        case 'boolean':
          localDescription(part.type, item);
          break;
        case 'binary':
          // EAC-CPF carries no binary content (docs/overview.md: what is lost).
          break;
      }
    }
    if (part.type === 'PT_EVENT' && partDate !== undefined) {
      chronItems.open('chronItem');
      writeDate(chronItems, partDate);
      chronItems.leaf('event', eventText).close('chronItem');
    }
  }

  return {
    names: names.take() + alternativeNames.take(),
    identityIds: identityIds.take(),
    localDescriptions: localDescriptions.take(),
    places: places.take(),
    creation: sections.creation,
    extinction: sections.extinction,
    abstract: sections.abstract,
    paragraphs: paragraphs.take(),
    chronItems: chronItems.take(),
    relations: relations.take(),
    sources: sources.take(),
  };
}

/**
 * A name part as a `nameEntry`: each string (and number) item a `part`
 * under its item type, its dates `useDates`, its name type (NM_TYPE) the
 * entry's localType. A name with nothing to show writes nothing.
 */
function writeNameEntry(out: Markup, items: readonly Item[], preferred: boolean): void {
  const entry = new Markup();
  let nameType: string | undefined;
  let hasPart = false;
  for (const item of items) {
    if (item.kind === 'enum' && item.type === NAME_TYPE) nameType ??= item.spec;
    const text = item.kind === 'string' || item.kind === 'int' ? item.value : undefined;
    if (!nonBlank(text)) continue;
    entry.leaf('part', text, [['localType', item.type]]);
    hasPart = true;
  }
  if (!hasPart) return;
  for (const item of items) {
    if (item.kind !== 'unitDate') continue;
    entry.open('useDates');
    writeDate(entry, item);
    entry.close('useDates');
  }
  out
    .open('nameEntry', [
      ['localType', nameType],
      ['status', preferred ? 'authorized' : 'alternative'],
    ])
    .append(entry.take())
    .close('nameEntry');
}

/** A reference to another record: its page's IRI, its number and UUID as the target's parts. */
export function writeRelation(
  out: Markup,
  origin: string | undefined,
  ref: EntityRef,
  relationType: string,
  localType: string | undefined,
  date: UnitDate | undefined,
): void {
  out.open('relation').open('targetEntity', [
    ['targetType', 'agent'],
    ['valueURI', pageIri(origin, ref)],
  ]);
  if (ref.entityId !== undefined) out.leaf('part', ref.entityId, [['localType', 'entityId']]);
  if (ref.entityUuid !== undefined) out.leaf('part', ref.entityUuid, [['localType', 'entityUuid']]);
  out.close('targetEntity');
  if (date !== undefined) writeDate(out, date);
  out.leaf('relationType', relationType, [['localType', localType]]).close('relation');
}
