// The oai_dc form of a record (docs/overview.md, "OAI-PMH", holds the same
// table): unqualified Dublin Core, each element repeated as the record has
// values for it.
//
//   dc:title       the preferred name first, then every other name (display forms)
//   dc:type        the entity type
//   dc:description the brief description (PT_BODY BRIEF_DESC)
//   dc:date        every date of the record's parts (unitDate items), from/to
//   dc:identifier  urn:uuid:{entity uuid}, then every PT_IDENT identifier value
//   dc:relation    every entity the record points at (urn:uuid:… or its number), and every link's URL

import type { EntityRecord, Item } from '../model.ts';
import { briefDescription, displayName, preferredNamePart } from '../text.ts';
import { escapeText } from '../xml/escape.ts';

const OPENING =
  '<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/" ' +
  'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd">';

export const OAI_DC = {
  namespace: 'http://www.openarchives.org/OAI/2.0/oai_dc/',
  schema: 'http://www.openarchives.org/OAI/2.0/oai_dc.xsd',
} as const;

/** The record's oai_dc element. */
export function dublinCore(record: EntityRecord): string {
  let out = OPENING;
  const element = (name: string, value: string) => {
    const text = value.trim();
    if (text !== '') out += `<dc:${name}>${escapeText(text)}</dc:${name}>`;
  };
  const preferred = preferredNamePart(record);
  if (preferred !== undefined) element('title', displayName(preferred));
  for (const part of record.parts) if (part.type === 'PT_NAME' && part !== preferred) element('title', displayName(part));
  element('type', record.entityType);
  element('description', briefDescription(record) ?? '');
  forEachItem(record, (item) => {
    if (item.kind === 'unitDate') element('date', item.from === item.to ? item.from : `${item.from}/${item.to}`);
  });
  element('identifier', `urn:uuid:${record.entityUuid}`);
  for (const part of record.parts) {
    if (part.type !== 'PT_IDENT') continue;
    for (const item of part.items) if (item.kind === 'string') element('identifier', item.value);
  }
  forEachItem(record, (item) => {
    if (item.kind === 'link') element('relation', item.url);
    else if (item.kind === 'entityRef' && item.target.kind === 'stored') {
      const { entityUuid, entityId } = item.target.ref;
      element('relation', entityUuid !== undefined ? `urn:uuid:${entityUuid}` : String(entityId ?? ''));
    }
  });
  return `${out}</oai_dc:dc>`;
}

function forEachItem(record: EntityRecord, visit: (item: Item) => void): void {
  for (const part of record.parts) {
    for (const item of part.items) visit(item);
    for (const item of part.extensionItems ?? []) visit(item);
  }
}
