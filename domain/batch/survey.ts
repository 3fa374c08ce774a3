// The first pass over a batch: what planning any part of it needs to know
// about the whole, kept small per entity (a large batch is planned a group of
// commands at a time, and its commands are never all in memory at once).
// Which localIds it declares (references may point forward), how often each
// is the subject of a command (a record is written once its last command is
// planned), and what the caller must load (see BatchLookups).

import type { ChangeCommand, EntityRef, EntityTarget, Item, Part } from '../model.ts';

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
    const ordinal = this.#commands++;
    this.#addLookups(command);
    if (command.kind === 'update' && command.entity.kind === 'local') {
      // Counted only when declared earlier: a local update before its declaration fails and touches nothing.
      const declaration = this.declarations.get(command.entity.localId);
      if (declaration !== undefined) declaration.touches += 1;
      return;
    }
    const localId = command.kind === 'create' ? command.localId : command.entity.localId;
    if (this.declarations.has(localId)) {
      this.duplicates.push({ ordinal, localId });
      return;
    }
    const declaration: SurveyedDeclaration =
      command.kind === 'create'
        ? { localId, ordinal, kind: 'create', ref: command.entityUuid === undefined ? NO_REF : { entityUuid: command.entityUuid }, touches: 1 }
        : { localId, ordinal, kind: 'stored', ref: refOf(command.entity as { entityId?: number; entityUuid?: string }), touches: 1 };
    this.declarations.set(localId, declaration);
    if (command.kind === 'create' && command.entityUuid !== undefined && !this.createsByUuid.has(command.entityUuid)) {
      this.createsByUuid.set(command.entityUuid, declaration);
    }
  }

  lookups(): BatchLookups {
    return {
      records: this.#records.values(),
      targets: this.#targets.values(),
      createUuids: [...this.createsByUuid.keys()],
      createCount: this.#createCount,
    };
  }

  #addLookups(command: ChangeCommand): void {
    const targets = this.#targets;
    const addTarget = (target: EntityTarget | undefined) => {
      if (target?.kind === 'stored') targets.add(target.ref);
    };
    const addItems = (items: readonly Item[]) => {
      for (const item of items) if (item.kind === 'entityRef') addTarget(item.target);
    };
    const addParts = (parts: readonly Part[]) => {
      for (const part of parts) {
        addItems(part.items);
        if (part.extensionItems !== undefined) addItems(part.extensionItems);
      }
    };
    if (command.kind === 'create') {
      this.#createCount += 1;
      addParts(command.parts);
      return;
    }
    if (command.entity.kind === 'stored') this.#records.add(command.entity);
    for (const change of command.changes) {
      if (change.op === 'newPart') addParts([change.part]);
      else if (change.op === 'newItems' || change.op === 'updateItems') addItems(change.items);
      else if (change.op === 'setState') addTarget(change.replacement);
    }
  }
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
