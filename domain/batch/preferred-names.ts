// The PreferredNameExists warning, a second pure step: planBatch cannot see
// which stored entities hold a name, so the caller queries the holders of the
// keys this step asks for and passes them back in.

import { BATCH_ISSUE_CODES, type EntityIssues, type EntityRecord, type Issue, type PartRef } from '../model.ts';
import { normalizeForSearch, preferredName, preferredNamePart } from '../text.ts';
import { hasSeverity, IssueLog, partRefOf, toIssue } from './issues.ts';
import { isActive } from './state-rules.ts';
import type { BatchPlan, PlannedRecord } from './types.ts';

export interface PreferredNameKey {
  localId: string;
  entityId: number;
  entityType: string;
  /** normalizeForSearch of the display form of the preferred name. */
  normalizedName: string;
}

/**
 * entityIds of stored entities whose current preferred name has this key.
 * The caller's query must leave out entities in ERS_INVALID or ERS_REPLACED:
 * they hold no name.
 */
export type NameHolders = (entityType: string, normalizedName: string) => readonly number[];

/** Between the entity type and the normalised name in a name key (nameKeys()). */
export const NAME_KEY_SEPARATOR = '\u0001';

function keyOf(record: EntityRecord): { entityType: string; normalizedName: string } | undefined {
  if (!isActive(record.state)) return undefined;
  const normalizedName = normalizeForSearch(preferredName(record));
  return normalizedName === '' ? undefined : { entityType: record.entityType, normalizedName };
}

/** A name's key: the separator is a character no XML document holds, so the key splits back into its two parts. */
const keyString = (entityType: string, normalizedName: string) => `${entityType}${NAME_KEY_SEPARATOR}${normalizedName}`;
const splitKey = (key: string) => key.split(NAME_KEY_SEPARATOR) as [string, string];

/**
 * A flat copy of a string built by concatenation. V8 keeps a concatenation
 * of 13 characters or more as a rope over its pieces (here: the record's
 * entity type and item values), which would all stay alive with the key and
 * display name kept for every named record of a large batch.
 */
function flat(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf8').toString('utf8');
}

/** Keys to check: records that are new, or whose type, preferred name or activity changed. */
export function preferredNameKeys(plan: BatchPlan): PreferredNameKey[] {
  const check = new PreferredNameCheck();
  return plan.records.flatMap((record) => check.add(record) ?? []);
}

/**
 * What the check keeps of a record with an active name: enough to name it in
 * a warning, and flat, because a batch of 300,000 creates keeps one for each
 * until the end (docs/performance.md, worker memory).
 */
interface NamedRecord {
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
 * The PreferredNameExists check over a batch planned group by group: each
 * record is added once it is final, keeping a few strings of it; the caller
 * asks who holds the keys to check (keys()); warnings() then judges the batch.
 */
export class PreferredNameCheck {
  /** Every record with an active name, by key (one record, or several when they share it). */
  readonly #byKey = new Map<string, NamedRecord | NamedRecord[]>();
  /** Records whose name is checked, in the order they were added. */
  readonly #checked: NamedRecord[] = [];

  /** Remembers a final record; returns its key when its name must be checked against the stored holders. */
  add(record: PlannedRecord): PreferredNameKey | undefined {
    const named = this.#remember(record);
    if (named === undefined) return undefined;
    const [entityType, normalizedName] = splitKey(named.key);
    return { localId: named.localId, entityId: named.entityId, entityType, normalizedName };
  }

  /**
   * add() without building the key it returns: what a large apply calls,
   * asking for the checked keys once at the end (keys()).
   */
  addRecord(record: PlannedRecord): void {
    this.#remember(record);
  }

  /** The distinct keys to check against the stored holders: entity type and normalised name. */
  keys(): { entityType: string; normalizedName: string }[] {
    return this.nameKeys().map((key) => {
      const [entityType, normalizedName] = splitKey(key);
      return { entityType, normalizedName };
    });
  }

  /**
   * keys() as the strings the check holds anyway, entity type and normalised
   * name joined by NAME_KEY_SEPARATOR: what a large apply asks for, without
   * building two strings and an object for each of its names.
   */
  nameKeys(): string[] {
    const seen = new Set<string>();
    const keys: string[] = [];
    for (const { key } of this.#checked) {
      if (seen.has(key)) continue;
      seen.add(key);
      keys.push(key);
    }
    return keys;
  }

  #remember(record: PlannedRecord): NamedRecord | undefined {
    const after = keyOf(record.after);
    if (after === undefined) return undefined;
    const key = flat(keyString(after.entityType, after.normalizedName));
    const part = preferredNamePart(record.after);
    const named: NamedRecord = { key, localId: record.localId, entityId: record.after.entityId, isNew: record.isNew, displayName: flat(preferredName(record.after)) };
    if (part !== undefined) {
      const partRef = partRefOf(part.type, part.partUuid);
      named.partType = partRef.type;
      if (partRef.partUuid !== undefined) named.partUuid = partRef.partUuid;
    }
    const sharing = this.#byKey.get(key);
    if (sharing === undefined) this.#byKey.set(key, named);
    else if (Array.isArray(sharing)) sharing.push(named);
    else this.#byKey.set(key, [sharing, named]);
    const before = record.before === undefined ? undefined : keyOf(record.before);
    if (before !== undefined && before.entityType === after.entityType && before.normalizedName === after.normalizedName) return undefined;
    this.#checked.push(named);
    return named;
  }

  /**
   * A PreferredNameExists warning for every checked record whose name is
   * also held by another entity: a stored holder that the batch does not
   * move off the name (isPlanned: the batch's own entities, whose planned
   * form decides), or another record of the batch.
   */
  warnings(holders: NameHolders, isPlanned: (entityId: number) => boolean, newUuid: () => string): EntityIssues[] {
    const log = new IssueLog();
    for (const record of this.#checked) {
      const { key } = record;
      const [entityType, normalizedName] = splitKey(key);
      // Holders reflect the database before the batch; for entities of the batch their planned form decides.
      const stored = [...new Set(holders(entityType, normalizedName))].filter((entityId) => !isPlanned(entityId)).sort((x, y) => x - y);
      const sharing = this.#byKey.get(key);
      const inBatch = (Array.isArray(sharing) ? sharing : sharing === undefined ? [] : [sharing]).filter((other) => other.entityId !== record.entityId);
      if (stored.length === 0 && inBatch.length === 0) continue;
      log.add(record.localId, [nameWarning(record, stored, inBatch, newUuid)]);
    }
    return log.groups();
  }
}

/**
 * Adds a PreferredNameExists warning to every checked record whose name is
 * also held by another entity: a stored holder that this batch does not move
 * off the name, or another record of this batch.
 */
export function addPreferredNameWarnings(plan: BatchPlan, holders: NameHolders, newUuid: () => string): BatchPlan {
  const check = new PreferredNameCheck();
  const planned = new Set<number>();
  for (const record of plan.records) {
    check.add(record);
    planned.add(record.after.entityId);
  }
  const log = new IssueLog(plan.issues);
  for (const group of check.warnings(holders, (entityId) => planned.has(entityId), newUuid)) log.add(group.localId, group.issues);
  const issues = log.groups();
  return { ...plan, issues, hasErrors: hasSeverity(issues, 'ERROR'), hasWarnings: hasSeverity(issues, 'WARNING') };
}

/** Batch records are named by localId (new ones have per-attempt ids), stored holders by entityId: see the force key. */
function nameWarning(record: NamedRecord, stored: number[], inBatch: NamedRecord[], newUuid: () => string): Issue {
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
