// The first pass over a batch: what planning any part of it needs to know
// about the whole, kept small per entity (a large batch is planned a group of
// commands at a time, and its commands are never all in memory at once).
// Which localIds it declares (references may point forward), how often each
// is the subject of a command (a record is written once its last command is
// planned), and what the caller must load (see BatchLookups).

import type { ChangeCommand, EntityRef, EntityTarget, Item, Part, UpdateEntityCommand } from '../../domain/model.ts';
import { ByteColumn, StringIndex, Uint32Column, UuidColumn, UuidMap } from './columns.ts';

export interface BatchLookups {
  /** Entities that updates name: load their current records. */
  records: EntityRef[];
  /** Stored entities that items and replacements point at: load at least their ids and state. */
  targets: EntityRef[];
  /** UUIDs that creates bring: ask which are taken. */
  createUuids: string[];
  /** How many entityIds to allocate. */
  createCount: number;
}

/** A localId's first declaration: a create, or an update of a stored entity. */
export interface SurveyedDeclaration {
  localId: string;
  /** Position of the declaring command in the batch (0-based); a later command with this localId is a duplicate. */
  ordinal: number;
  kind: 'create' | 'stored';
  /** A stored update's reference as written; a create's own entityUuid when it brings one. */
  ref: EntityRef;
  /** Commands of the batch that may change this entity under this localId (an upper bound). */
  touches: number;
}

/** A declaration's kind in BatchSurvey's columns. */
const STORED = 1;

/**
 * The first declaration of each localId (and what repeats one), kept in
 * columns by declaration index rather than as an object per entity: a batch
 * of 300,000 creates keeps them to its end (docs/decisions/0019). Nothing on the heap per declaration: the localIds' code units
 * and the table finding them are typed arrays too (StringIndex), a create's
 * own entityUuid 16 bytes (UuidMap); only a stored update's reference is an
 * object.
 */
export class BatchSurvey {
  /** Commands that repeat an earlier declaration's localId: reported once, then ignored. */
  readonly duplicates: { ordinal: number; localId: string }[] = [];
  #commands = 0;
  #createCount = 0;
  readonly #records = new RefSet();
  readonly #targets = new RefSet();
  /** Declaration index by localId, and each declaration's localId. */
  readonly #byLocalId = new StringIndex();
  readonly #ordinals = new Uint32Column();
  readonly #touches = new Uint32Column();
  readonly #kinds = new ByteColumn();
  /** A create's own entityUuid, by declaration index (undefined when it brings none). */
  readonly #createUuids = new UuidColumn();
  /** A stored update's reference as written, by declaration index. */
  readonly #storedRefs = new Map<number, EntityRef>();
  /** The first create bringing each entityUuid: its declaration index. */
  readonly #createByUuid = new UuidMap();

  get commands(): number {
    return this.#commands;
  }

  /** Declarations so far (indices 0 to size - 1, in batch order). */
  get size(): number {
    return this.#byLocalId.size;
  }

  /** The first declaration of each localId, in batch order, as objects made when asked (a view of the columns). */
  get declarations(): DeclarationView {
    return {
      get: (localId) => {
        const index = this.#byLocalId.get(localId);
        return index === undefined ? undefined : this.declaration(index);
      },
      has: (localId) => this.#byLocalId.has(localId),
      size: this.size,
      values: () => Array.from({ length: this.size }, (_, index) => this.declaration(index)).values(),
    };
  }

  /** The first create bringing each entityUuid (made when asked: tests). */
  get createsByUuid(): Map<string, SurveyedDeclaration> {
    return new Map(this.#createByUuid.entries().map(([uuid, index]) => [uuid, this.declaration(index)]));
  }

  /** The declaration index of a localId. */
  indexOf(localId: string): number | undefined {
    return this.#byLocalId.get(localId);
  }

  /** The declaration index of the first create bringing this entityUuid. */
  createIndexOf(entityUuid: string): number | undefined {
    return this.#createByUuid.get(entityUuid);
  }

  localIdAt(index: number): string {
    return this.#byLocalId.at(index);
  }

  ordinalAt(index: number): number {
    return this.#ordinals.get(index);
  }

  isCreate(index: number): boolean {
    return this.#kinds.get(index) !== STORED;
  }

  touchesAt(index: number): number {
    return this.#touches.get(index);
  }

  /** A create's own entityUuid, when it brings one. */
  createUuidAt(index: number): string | undefined {
    return this.#createUuids.get(index);
  }

  /** A stored update's reference as written; a create's own entityUuid when it brings one (else an empty ref). */
  refAt(index: number): EntityRef {
    const stored = this.#storedRefs.get(index);
    if (stored !== undefined) return stored;
    const entityUuid = this.#createUuids.get(index);
    return entityUuid === undefined ? {} : { entityUuid };
  }

  /** Declaration `index` as an object (its ref made when read). */
  declaration(index: number): SurveyedDeclaration {
    const refAt = () => this.refAt(index);
    return {
      localId: this.localIdAt(index),
      ordinal: this.ordinalAt(index),
      kind: this.isCreate(index) ? 'create' : 'stored',
      get ref() {
        return refAt();
      },
      touches: this.touchesAt(index),
    };
  }

  add(command: ChangeCommand): void {
    if (command.kind === 'create') {
      this.addCreate(command.localId, command.entityUuid, storedTargetsOf(command.parts));
      return;
    }
    const ordinal = this.#commands++;
    this.#addLookups(command);
    if (command.entity.kind === 'local') {
      // Counted only when declared earlier: a local update before its declaration fails and touches nothing.
      const index = this.#byLocalId.get(command.entity.localId);
      if (index !== undefined) this.#touches.set(index, this.#touches.get(index) + 1);
      return;
    }
    const localId = command.entity.localId;
    if (this.#byLocalId.has(localId)) {
      this.duplicates.push({ ordinal, localId });
      return;
    }
    const index = this.#declare(localId, ordinal, STORED);
    this.#storedRefs.set(index, refOf(command.entity));
  }

  /**
   * A create, as the survey sees it: its localId, the entityUuid it brings (if
   * any), and the stored entities its items point at (the first pass over a
   * stored body reads no more of it: engine/batch/survey-scan.ts).
   */
  addCreate(localId: string, entityUuid: string | undefined, targets: readonly EntityRef[]): void {
    const ordinal = this.#commands++;
    this.#createCount += 1;
    for (const target of targets) this.#targets.add(target);
    if (this.#byLocalId.has(localId)) {
      this.duplicates.push({ ordinal, localId });
      return;
    }
    const index = this.#declare(localId, ordinal, 0);
    if (entityUuid === undefined) return;
    this.#createUuids.set(index, entityUuid);
    if (!this.#createByUuid.has(entityUuid)) this.#createByUuid.set(entityUuid, index);
  }

  /** Forgets what lookups() lists (an object and a Map entry per updated or referenced stored entity): the apply asks once. */
  releaseLookups(): void {
    this.#records.clear();
    this.#targets.clear();
  }

  lookups(): BatchLookups {
    return {
      records: this.#records.values(),
      targets: this.#targets.values(),
      createUuids: this.#createByUuid.keys(),
      createCount: this.#createCount,
    };
  }

  #declare(localId: string, ordinal: number, kind: number): number {
    const index = this.#byLocalId.add(localId);
    this.#createUuids.set(index, undefined);
    this.#ordinals.set(index, ordinal);
    this.#touches.set(index, 1);
    this.#kinds.set(index, kind);
    return index;
  }

  #addLookups(command: UpdateEntityCommand): void {
    const targets = this.#targets;
    const addTarget = (target: EntityTarget | undefined) => {
      if (target?.kind === 'stored') targets.add(target.ref);
    };
    if (command.entity.kind === 'stored') this.#records.add(command.entity);
    for (const change of command.changes) {
      if (change.op === 'newPart') for (const ref of storedTargetsOf([change.part])) targets.add(ref);
      else if (change.op === 'newItems' || change.op === 'updateItems')
        for (const ref of storedTargetsOf([{ items: change.items }])) targets.add(ref);
      else if (change.op === 'setState') addTarget(change.replacement);
    }
  }
}

/** What BatchSurvey.declarations offers of a Map. */
export interface DeclarationView {
  get(localId: string): SurveyedDeclaration | undefined;
  has(localId: string): boolean;
  readonly size: number;
  values(): IterableIterator<SurveyedDeclaration>;
}

/** The stored entities that entityRef items of these parts point at, in document order. */
function storedTargetsOf(parts: readonly Pick<Part, 'items' | 'extensionItems'>[]): EntityRef[] {
  const refs: EntityRef[] = [];
  const addItems = (items: readonly Item[]) => {
    for (const item of items) if (item.kind === 'entityRef' && item.target.kind === 'stored') refs.push(item.target.ref);
  };
  for (const part of parts) {
    addItems(part.items);
    if (part.extensionItems !== undefined) addItems(part.extensionItems);
  }
  return refs;
}

export function surveyBatch(commands: Iterable<ChangeCommand>): BatchSurvey {
  const survey = new BatchSurvey();
  for (const command of commands) survey.add(command);
  return survey;
}

export function refOf(entity: { entityId?: number; entityUuid?: string }): EntityRef {
  const ref: EntityRef = {};
  if (entity.entityId !== undefined) ref.entityId = entity.entityId;
  if (entity.entityUuid !== undefined) ref.entityUuid = entity.entityUuid;
  return ref;
}

class RefSet {
  readonly #refs = new Map<string, EntityRef>();

  add(ref: EntityRef): void {
    const copy = refOf(ref);
    this.#refs.set(`${copy.entityId ?? ''}/${copy.entityUuid ?? ''}`, copy);
  }

  values(): EntityRef[] {
    return [...this.#refs.values()];
  }

  clear(): void {
    this.#refs.clear();
  }
}
