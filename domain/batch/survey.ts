// The first pass over a batch: what planning any part of it needs to know
// about the whole, kept small per entity (a large batch is planned a group of
// commands at a time, and its commands are never all in memory at once).
// Which localIds it declares (references may point forward), how often each
// is the subject of a command (a record is written once its last command is
// planned), and what the caller must load (see BatchLookups).

import type { ChangeCommand, EntityRef, EntityTarget, Item, Part, UpdateEntityCommand } from '../model.ts';

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

/** The ref of every create without its own UUID: one shared object, not one per entity of a large batch. */
const NO_REF: EntityRef = Object.freeze({});

export class BatchSurvey {
  /** First declaration of each localId, in batch order. */
  readonly declarations = new Map<string, SurveyedDeclaration>();
  /** Commands that repeat an earlier declaration's localId: reported once, then ignored. */
  readonly duplicates: { ordinal: number; localId: string }[] = [];
  /** The first create bringing each entityUuid. */
  readonly createsByUuid = new Map<string, SurveyedDeclaration>();
  #commands = 0;
  #createCount = 0;
  readonly #records = new RefSet();
  readonly #targets = new RefSet();

  get commands(): number {
    return this.#commands;
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
      const declaration = this.declarations.get(command.entity.localId);
      if (declaration !== undefined) declaration.touches += 1;
      return;
    }
    const localId = command.entity.localId;
    if (this.declarations.has(localId)) {
      this.duplicates.push({ ordinal, localId });
      return;
    }
    this.declarations.set(localId, { localId, ordinal, kind: 'stored', ref: refOf(command.entity), touches: 1 });
  }

  /**
   * A create, as the survey sees it: its localId, the entityUuid it brings (if
   * any), and the stored entities its items point at (the first pass over a
   * stored body reads no more of it: domain/xml/batch-survey-scan.ts).
   */
  addCreate(localId: string, entityUuid: string | undefined, targets: readonly EntityRef[]): void {
    const ordinal = this.#commands++;
    this.#createCount += 1;
    for (const target of targets) this.#targets.add(target);
    if (this.declarations.has(localId)) {
      this.duplicates.push({ ordinal, localId });
      return;
    }
    const declaration: SurveyedDeclaration = { localId, ordinal, kind: 'create', ref: entityUuid === undefined ? NO_REF : { entityUuid }, touches: 1 };
    this.declarations.set(localId, declaration);
    if (entityUuid !== undefined && !this.createsByUuid.has(entityUuid)) this.createsByUuid.set(entityUuid, declaration);
  }

  lookups(): BatchLookups {
    return {
      records: this.#records.values(),
      targets: this.#targets.values(),
      createUuids: [...this.createsByUuid.keys()],
      createCount: this.#createCount,
    };
  }

  #addLookups(command: UpdateEntityCommand): void {
    const targets = this.#targets;
    const addTarget = (target: EntityTarget | undefined) => {
      if (target?.kind === 'stored') targets.add(target.ref);
    };
    if (command.entity.kind === 'stored') this.#records.add(command.entity);
    for (const change of command.changes) {
      if (change.op === 'newPart') for (const ref of storedTargetsOf([change.part])) targets.add(ref);
      else if (change.op === 'newItems' || change.op === 'updateItems') for (const ref of storedTargetsOf([{ items: change.items }])) targets.add(ref);
      else if (change.op === 'setState') addTarget(change.replacement);
    }
  }
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
}
