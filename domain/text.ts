// Text forms derived from a record: the search key of a name and the display
// forms shown in search results and batch messages.

import type { EntityRecord, Item, Part } from './model.ts';

/** Text of ASCII characters alone (no code unit above U+007F). */
const ASCII = /^[^\u0080-\uffff]*$/;

/**
 * Accent-, case- and whitespace-insensitive form for search and for the
 * preferred-name uniqueness check: 'Novák  Jan' and 'NOVAK jan' are equal.
 */
export function normalizeForSearch(text: string): string {
  // ASCII has no marks and is its own NFD and NFC form: most item values (dates, numbers, UUIDs, codes) take this path.
  if (ASCII.test(text)) return text.toLowerCase().replace(/\s+/g, ' ').trim();
  // Lower-case first so that e.g. 'İ' loses its dot with the other marks.
  return text.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC').replace(/\s+/gu, ' ').trim();
}

const NM_MAIN = 'NM_MAIN';
const NM_MINOR = 'NM_MINOR';
const NM_ORDER = 'NM_ORDER';

function stringValues(items: readonly Item[], accept: (type: string) => boolean): string[] {
  const values: string[] = [];
  for (const item of items) {
    if (item.kind !== 'string' || !accept(item.type)) continue;
    const value = item.value.trim();
    if (value !== '') values.push(value);
  }
  return values;
}

/**
 * Display form of a PT_NAME part, in the manner of the archival authority
 * headings the reference system produces:
 * `NM_MAIN[, NM_MINOR][ NM_ORDER][ (other NM_* strings, joined by ', ')]`,
 * e.g. 'Novák, Jan (1850-1905)' or 'Karel IV. (král český)'.
 * Without an NM_MAIN item: all string items of the part joined by a space.
 */
export function displayName(part: Part): string {
  const [main] = stringValues(part.items, (type) => type === NM_MAIN);
  if (main === undefined) return stringValues(part.items, () => true).join(' ');

  let name = main;
  const [minor] = stringValues(part.items, (type) => type === NM_MINOR);
  if (minor !== undefined) name += `, ${minor}`;
  const [order] = stringValues(part.items, (type) => type === NM_ORDER);
  if (order !== undefined) name += ` ${order}`;
  const supplements = stringValues(
    part.items,
    (type) => type.startsWith('NM_') && type !== NM_MAIN && type !== NM_MINOR && type !== NM_ORDER,
  );
  if (supplements.length > 0) name += ` (${supplements.join(', ')})`;
  return name;
}

/** The part named by `preferredNamePart`, else (also when that part is gone) the first PT_NAME part. */
export function preferredNamePart(record: EntityRecord): Part | undefined {
  const named =
    record.preferredNamePart === undefined
      ? undefined
      : record.parts.find((part) => part.type === 'PT_NAME' && part.partUuid === record.preferredNamePart);
  return named ?? record.parts.find((part) => part.type === 'PT_NAME');
}

/** Display form of the record's preferred name; '' when it has no PT_NAME part. */
export function preferredName(record: EntityRecord): string {
  const part = preferredNamePart(record);
  return part === undefined ? '' : displayName(part);
}

/** The BRIEF_DESC string item of the record's PT_BODY part. */
export function briefDescription(record: EntityRecord): string | undefined {
  for (const part of record.parts) {
    if (part.type !== 'PT_BODY') continue;
    const [description] = stringValues(part.items, (type) => type === 'BRIEF_DESC');
    if (description !== undefined) return description;
  }
  return undefined;
}
