import type { EntityRecord, Item, PartType } from './model.ts';
import { displayName, normalizeForSearch, preferredNamePart } from './text.ts';

/** One searchable value of a record: an item's text, or the display form of a name part. */
export interface SearchValue {
  partUuid: string;
  partType: PartType;
  /** The value belongs to the preferred name part (the PT_PREF_NAME search restriction). */
  preferred: boolean;
  kind: 'item' | 'name';
  itemType?: string;
  itemSpec?: string;
  value: string;
  valueNorm: string;
}

/** The text an item is searched by; items without text (enum, binary) are matched by type/spec only. */
export function itemSearchText(item: Item): string {
  switch (item.kind) {
    case 'string':
    case 'int':
      return item.value;
    case 'boolean':
      return String(item.value);
    case 'unitDate':
      return item.from === item.to ? item.from : `${item.from}/${item.to}`;
    case 'link':
      return item.name ? `${item.name} ${item.url}` : item.url;
    case 'entityRef':
      if (item.target.kind === 'stored') return String(item.target.ref.entityId ?? item.target.ref.entityUuid ?? '');
      return '';
    case 'enum':
    case 'binary':
      return '';
  }
}

/** Every searchable value of the record as it now stands. */
export function searchValues(record: EntityRecord): SearchValue[] {
  const preferredUuid = preferredNamePart(record)?.partUuid;
  const values: SearchValue[] = [];
  for (const part of record.parts) {
    const preferred = part.partUuid === preferredUuid;
    if (part.type === 'PT_NAME') {
      const name = displayName(part);
      if (name) values.push({ partUuid: part.partUuid, partType: part.type, preferred, kind: 'name', value: name, valueNorm: normalizeForSearch(name) });
    }
    for (const item of [...part.items, ...(part.extensionItems ?? [])]) {
      const value = itemSearchText(item);
      values.push({
        partUuid: part.partUuid,
        partType: part.type,
        preferred,
        kind: 'item',
        itemType: item.type,
        itemSpec: item.spec,
        value,
        valueNorm: normalizeForSearch(value),
      });
    }
  }
  return values;
}
