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
function itemSearchText(item: Item): string {
  switch (item.kind) {
    case 'string':
    case 'int':
      return item.value;
    case 'boolean':
      return String(item.value);
    case 'unitDate':
      return unitDateSearchText(item.from, item.to);
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

/** A date item as search_value holds it: `from/to`, or `from` alone when both ends are equal. */
export function unitDateSearchText(from: string, to: string): string {
  return from === to ? from : `${from}/${to}`;
}

/** One end of a date interval: [-]YYYY-MM-DDThh:mm:ss (the XSDs' TimeInterval), a year of 4 to 9 digits. */
const DATE_TIME = '[-+]?[0-9]{4,9}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}';
/**
 * A date interval as a search value: `from/to` (how search_value holds a
 * date), `from-to` (how the known client sends its creation and extinction
 * filters: ISO_LOCAL_DATE_TIME, '-', ISO_LOCAL_DATE_TIME), or one date. The
 * ends have a fixed shape after the year, so '-' between them, and a minus
 * sign of a year before the common era, cannot be confused.
 */
const DATE_INTERVAL = new RegExp(`^(${DATE_TIME})(?:[-/](${DATE_TIME}))?$`);
/** The same, over the normalised text search_value.value_norm holds (lower-case 't'), for SQL. */
export const SEARCH_DATE_PATTERN = `^${DATE_TIME.replace('[Tt]', 't')}(/${DATE_TIME.replace('[Tt]', 't')})?$`;

export interface DateInterval {
  /** The ends as sent, upper-case T. */
  from: string;
  to: string;
  /** The ends as comparable numbers (dateKey), decimal. */
  fromKey: string;
  toKey: string;
}

/**
 * The date interval a search value names, or undefined when it names none.
 * A single date is the interval of that one instant.
 */
export function parseDateInterval(text: string): DateInterval | undefined {
  const match = DATE_INTERVAL.exec(text.trim());
  if (!match) return undefined;
  const from = match[1]!.toUpperCase();
  const to = (match[2] ?? match[1]!).toUpperCase();
  return { from, to, fromKey: dateKey(from).toString(), toKey: dateKey(to).toString() };
}

/**
 * A number that orders the instants [-]YYYY-MM-DDThh:mm:ss as time does:
 * year × 10^10 + MMDDhhmmss. Text order would not: it puts -0100 after -0050
 * and 10000 before 9999. A year of up to 9 digits fits a bigint.
 */
export function dateKey(dateTime: string): bigint {
  const match = /^([-+]?[0-9]+)-(.*)$/.exec(dateTime)!;
  return BigInt(match[1]!) * 10_000_000_000n + BigInt(match[2]!.replace(/[-Tt:]/g, ''));
}

/** Every searchable value of the record as it now stands. */
export function searchValues(record: EntityRecord): SearchValue[] {
  const preferredUuid = preferredNamePart(record)?.partUuid;
  const values: SearchValue[] = [];
  for (const part of record.parts) {
    const preferred = part.partUuid === preferredUuid;
    if (part.type === 'PT_NAME') {
      const name = displayName(part);
      if (name)
        values.push({
          partUuid: part.partUuid,
          partType: part.type,
          preferred,
          kind: 'name',
          value: name,
          valueNorm: normalizeForSearch(name),
        });
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

/** A field by which a user filter names a user: its CAM UUID, full name, or id. */
export type SearchUserField = 'uuid' | 'name' | 'id';

/** The search_user_role key of a user named by `field`; '' stands for "some user in the role". */
export function searchUserKey(field: SearchUserField, value: string): string {
  return `${field}:${value}`;
}

/**
 * The (user key, role) pairs user filters find a record by: the sender of its
 * current content (role SENDER) and each participant in its role, under each
 * field that names the user, and '' for "some user in this role"; each pair
 * once.
 */
export function searchUserRoles(record: EntityRecord): Array<{ userKey: string; role: string }> {
  const revision = record.revision;
  const users = [...(revision.user ? [{ role: 'SENDER', user: revision.user }] : []), ...revision.participants];
  const pairs = new Map<string, { userKey: string; role: string }>();
  for (const { role, user } of users) {
    const keys = [''];
    if (user.uuid !== undefined) keys.push(searchUserKey('uuid', user.uuid));
    if (user.name !== undefined) keys.push(searchUserKey('name', user.name));
    if (user.id !== undefined) keys.push(searchUserKey('id', user.id));
    for (const userKey of keys) pairs.set(`${userKey}\u0000${role}`, { userKey, role });
  }
  return [...pairs.values()];
}
