// The PreferredNameExists warning: a record of the batch ends with the
// preferred name (of its entity type) that another entity holds. It is
// judged at the end of the batch, with the stored holders the database
// supplies (BATCH_PIPELINE.end): each final record's name entry is staged,
// and the entries whose key another entry or a stored holder shares come
// back with those holders.

import {
  BATCH_ISSUE_CODES,
  ENTITY_STATES,
  type EntityIssues,
  type EntityRecord,
  type EntityState,
  type Issue,
  type PartRef,
} from '../model.ts';
import { normalizeForSearch, preferredName, preferredNamePart } from '../text.ts';
import { IssueLog, partRefOf, toIssue } from './issues.ts';
import { isActive } from './state-rules.ts';
import type { EndRule, KeyedEntry, PlannedRecord } from './types.ts';

/**
 * The states whose entities hold their preferred name: an entity in any
 * other state stands in no one's way. The database looks holders up among
 * these states (db/apply/names.ts), served by a partial index that must
 * cover them (migrations/…Initial.ts, entity_type_name_idx).
 */
export const NAME_HOLDER_STATES: readonly EntityState[] = ENTITY_STATES.filter(isActive);

/** Between the entity type and the normalised name in a name key (keyString). */
export const NAME_KEY_SEPARATOR = '\u0001';

/** The name key of a record that holds a non-empty preferred name. */
function nameKeyOf(record: EntityRecord): { entityType: string; normalizedName: string } | undefined {
  if (!NAME_HOLDER_STATES.includes(record.state)) return undefined;
  const normalizedName = normalizeForSearch(preferredName(record));
  return normalizedName === '' ? undefined : { entityType: record.entityType, normalizedName };
}

/** A name's key: the separator is a character no XML document holds, so the key splits back into its two parts. */
const keyString = (entityType: string, normalizedName: string) => `${entityType}${NAME_KEY_SEPARATOR}${normalizedName}`;
export const splitKey = (key: string) => key.split(NAME_KEY_SEPARATOR) as [string, string];

/** What a warning names of a record that holds its name. */
export interface NamedRecord {
  /** keyString(entityType, normalizedName): the entity type is read back from it. */
  key: string;
  localId: string;
  entityId: number;
  isNew: boolean;
  displayName: string;
  partType?: PartRef['type'];
  partUuid?: string;
}

/**
 * What the name check needs of a final record that holds a name, as one flat
 * entry: a large apply stages these in PostgreSQL a group at a time instead
 * of keeping one per entity to its end, and reads back only the entries
 * whose key another entry or a stored entity shares.
 */
export interface NameEntry extends NamedRecord, KeyedEntry {
  /** Its name is checked against the stored holders (new, or its type, name or holding changed). */
  checked: boolean;
}

/** The name entry of a final record, or undefined when it holds no name. */
function nameEntryOf(record: PlannedRecord): NameEntry | undefined {
  const after = nameKeyOf(record.after);
  if (after === undefined) return undefined;
  const before = record.before === undefined ? undefined : nameKeyOf(record.before);
  const entry: NameEntry = {
    key: keyString(after.entityType, after.normalizedName),
    localId: record.localId,
    entityId: record.after.entityId,
    isNew: record.isNew,
    displayName: preferredName(record.after),
    checked: before === undefined || before.entityType !== after.entityType || before.normalizedName !== after.normalizedName,
  };
  const part = preferredNamePart(record.after);
  if (part !== undefined) {
    const partRef = partRefOf(part.type, part.partUuid);
    entry.partType = partRef.type;
    if (partRef.partUuid !== undefined) entry.partUuid = partRef.partUuid;
  }
  return entry;
}

/**
 * A PreferredNameExists warning for every checked entry whose name is also
 * held by another entity: a stored holder the batch does not move off the
 * name, or another record of the batch. `entries` in the order the records
 * were planned, and for every key among them all the entries of that key (a
 * key no other entry shares needs only its checked entries); `holders` the
 * stored holders of a checked key.
 */
function stagedNameWarnings(
  entries: readonly NameEntry[],
  holders: (key: string) => readonly number[],
  isPlanned: (entityId: number) => boolean,
  newUuid: () => string,
): EntityIssues[] {
  const byKey = new Map<string, NameEntry[]>();
  for (const entry of entries) {
    const sharing = byKey.get(entry.key);
    if (sharing === undefined) byKey.set(entry.key, [entry]);
    else sharing.push(entry);
  }
  const log = new IssueLog();
  for (const entry of entries) {
    if (!entry.checked) continue;
    // Holders reflect the database before the batch; for entities of the batch their planned form decides.
    const stored = [...new Set(holders(entry.key))].filter((holder) => !isPlanned(holder)).sort((x, y) => x - y);
    const inBatch = byKey.get(entry.key)!.filter((other) => other.entityId !== entry.entityId);
    if (stored.length === 0 && inBatch.length === 0) continue;
    log.add(entry.localId, [nameWarning(entry, stored, inBatch, newUuid)]);
  }
  return log.groups();
}

/** Batch records are named by localId (new ones have per-attempt ids), stored holders by entityId: see the force key. */
export function nameWarning(record: NamedRecord, stored: number[], inBatch: NamedRecord[], newUuid: () => string): Issue {
  const others = [
    ...stored.map((entityId) => `entity ${entityId}`),
    ...inBatch.map((other) => (other.isNew ? `the entity created as localId ${other.localId}` : `entity ${other.entityId}`)),
  ];
  const [first] = stored;
  const firstStoredInBatch = inBatch.find((other) => !other.isNew);
  const entityId = first ?? firstStoredInBatch?.entityId;
  return toIssue(
    {
      code: BATCH_ISSUE_CODES.preferredNameExists,
      message: `Another entity of type ${splitKey(record.key)[0]} already has the preferred name "${record.displayName}": ${others.join(', ')}.`,
      ...(record.partType === undefined ? {} : { partRef: partRefOf(record.partType, record.partUuid) }),
      ...(entityId === undefined ? {} : { entityRef: { entityId } }),
    },
    'WARNING',
    newUuid,
  );
}

export const preferredNameRule: EndRule<NameEntry> = {
  name: 'PreferredNameExists',
  holderStates: NAME_HOLDER_STATES,
  entryOf: nameEntryOf,
  judge: stagedNameWarnings,
};
