// The PreferredNameExists check holding every record of a batch in memory:
// the reference the staged check of the apply (stagedNameWarnings) is held
// to, and the whole-batch check the domain tests plan with.

import type { EntityIssues, PartRef } from '../../domain/model.ts';
import { hasSeverity, IssueLog, partRefOf } from '../../domain/batch/issues.ts';
import { keyString, nameKeyOf, nameWarning, splitKey, type NamedRecord } from '../../domain/batch/preferred-names.ts';
import type { BatchPlan, PlannedRecord } from '../../domain/batch/types.ts';
import { preferredName, preferredNamePart } from '../../domain/text.ts';
import { ByteColumn, NumberColumn, TextColumn, UuidColumn } from '../../engine/batch/columns.ts';

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

/** In a record's flags: it is new; its name is checked against the stored holders; the rest, its part type's code (PART_TYPE_SHIFT). */
const IS_NEW = 1;
const CHECKED = 2;
const PART_TYPE_SHIFT = 2;

/**
 * The PreferredNameExists check over a batch planned group by group: each
 * record is added once it is final, keeping a few values of it; the caller
 * asks who holds the keys to check (keys()); warnings() then judges the batch.
 * A batch of 300,000 creates keeps one named record for each until the end
 * (docs/decisions/0019): kept in columns, not as objects, the
 * key and localId strings alone on the heap (the localId is the survey's),
 * the display name and part UUID as bytes outside it.
 */
export class PreferredNameCheck {
  /** Every record with an active name, by key: its index (one record), or several when they share it. */
  readonly #byKey = new Map<string, number | number[]>();
  readonly #keys: string[] = [];
  readonly #localIds: string[] = [];
  readonly #entityIds = new NumberColumn();
  readonly #flags = new ByteColumn();
  readonly #displayNames = new TextColumn();
  readonly #partUuids = new UuidColumn();
  /** Part types by their code - 1 (a handful: the name part's type). */
  readonly #partTypes: PartRef['type'][] = [];
  /** Records whose name is checked, in the order they were added. */
  readonly #checked = new NumberColumn();

  /** Remembers a final record; returns its key when its name must be checked against the stored holders. */
  add(record: PlannedRecord): PreferredNameKey | undefined {
    const index = this.#remember(record);
    if (index === undefined) return undefined;
    const [entityType, normalizedName] = splitKey(this.#keys[index]!);
    return { localId: this.#localIds[index]!, entityId: this.#entityIds.get(index), entityType, normalizedName };
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
   * building two strings and an object for each of its names. In the order
   * their first checked record was added.
   */
  nameKeys(): string[] {
    const keys: string[] = [];
    for (let at = 0; at < this.#checked.length; at += 1) {
      const index = this.#checked.get(at);
      const key = this.#keys[index]!;
      const sharing = this.#byKey.get(key)!;
      // Once per key: at its first checked record (a record shares its key with earlier ones only when they are alike).
      if (typeof sharing === 'number' || sharing.find((other) => (this.#flags.get(other) & CHECKED) !== 0) === index) keys.push(key);
    }
    return keys;
  }

  #remember(record: PlannedRecord): number | undefined {
    const after = nameKeyOf(record.after);
    if (after === undefined) return undefined;
    const key = flat(keyString(after.entityType, after.normalizedName));
    const part = preferredNamePart(record.after);
    const index = this.#keys.length;
    this.#keys.push(key);
    this.#localIds.push(record.localId);
    this.#entityIds.set(index, record.after.entityId);
    this.#displayNames.push(preferredName(record.after));
    let flags = record.isNew ? IS_NEW : 0;
    let partUuid: string | undefined;
    if (part !== undefined) {
      const partRef = partRefOf(part.type, part.partUuid);
      let code = this.#partTypes.indexOf(partRef.type) + 1;
      if (code === 0) code = this.#partTypes.push(partRef.type);
      flags |= code << PART_TYPE_SHIFT;
      partUuid = partRef.partUuid;
    }
    this.#partUuids.set(index, partUuid);
    const sharing = this.#byKey.get(key);
    if (sharing === undefined) this.#byKey.set(key, index);
    else if (Array.isArray(sharing)) sharing.push(index);
    else this.#byKey.set(key, [sharing, index]);
    const before = record.before === undefined ? undefined : nameKeyOf(record.before);
    const checked = before === undefined || before.entityType !== after.entityType || before.normalizedName !== after.normalizedName;
    this.#flags.set(index, checked ? flags | CHECKED : flags);
    if (!checked) return undefined;
    this.#checked.push(index);
    return index;
  }

  #named(index: number): NamedRecord {
    const flags = this.#flags.get(index);
    const named: NamedRecord = {
      key: this.#keys[index]!,
      localId: this.#localIds[index]!,
      entityId: this.#entityIds.get(index),
      isNew: (flags & IS_NEW) !== 0,
      displayName: this.#displayNames.get(index),
    };
    const code = flags >> PART_TYPE_SHIFT;
    if (code !== 0) {
      named.partType = this.#partTypes[code - 1]!;
      const partUuid = this.#partUuids.get(index);
      if (partUuid !== undefined) named.partUuid = partUuid;
    }
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
    for (let at = 0; at < this.#checked.length; at += 1) {
      const index = this.#checked.get(at);
      const key = this.#keys[index]!;
      const entityId = this.#entityIds.get(index);
      const [entityType, normalizedName] = splitKey(key);
      // Holders reflect the database before the batch; for entities of the batch their planned form decides.
      const stored = [...new Set(holders(entityType, normalizedName))].filter((holder) => !isPlanned(holder)).sort((x, y) => x - y);
      const sharing = this.#byKey.get(key);
      const inBatch = (Array.isArray(sharing) ? sharing : sharing === undefined ? [] : [sharing]).filter(
        (other) => this.#entityIds.get(other) !== entityId,
      );
      if (stored.length === 0 && inBatch.length === 0) continue;
      log.add(this.#localIds[index]!, [
        nameWarning(
          this.#named(index),
          stored,
          inBatch.map((other) => this.#named(other)),
          newUuid,
        ),
      ]);
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
