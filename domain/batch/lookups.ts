// What the caller must load before planning, and an in-memory BatchWorld
// over what it loaded.

import type { ChangeCommand, EntityRecord, EntityRef, EntityTarget, Item, Part } from '../model.ts';
import type { BatchWorld, EntitySummary } from './types.ts';

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

export function batchLookups(commands: readonly ChangeCommand[]): BatchLookups {
  const records = new RefSet();
  const targets = new RefSet();
  const createUuids = new Set<string>();
  let createCount = 0;
  const addTarget = (target: EntityTarget | undefined) => {
    if (target?.kind === 'stored') targets.add(target.ref);
  };
  const addItems = (items: readonly Item[]) => {
    for (const item of items) if (item.kind === 'entityRef') addTarget(item.target);
  };
  const addParts = (parts: readonly Part[]) => {
    for (const part of parts) addItems([...part.items, ...(part.extensionItems ?? [])]);
  };

  for (const command of commands) {
    if (command.kind === 'create') {
      createCount += 1;
      if (command.entityUuid !== undefined) createUuids.add(command.entityUuid);
      addParts(command.parts);
      continue;
    }
    if (command.entity.kind === 'stored') records.add(command.entity);
    for (const change of command.changes) {
      if (change.op === 'newPart') addParts([change.part]);
      else if (change.op === 'newItems' || change.op === 'updateItems') addItems(change.items);
      else if (change.op === 'setState') addTarget(change.replacement);
    }
  }
  return { records: records.values(), targets: targets.values(), createUuids: [...createUuids], createCount };
}

class RefSet {
  readonly #refs = new Map<string, EntityRef>();

  add(ref: EntityRef): void {
    const copy: EntityRef = {};
    if (ref.entityId !== undefined) copy.entityId = ref.entityId;
    if (ref.entityUuid !== undefined) copy.entityUuid = ref.entityUuid;
    this.#refs.set(`${copy.entityId ?? ''}/${copy.entityUuid ?? ''}`, copy);
  }

  values(): EntityRef[] {
    return [...this.#refs.values()];
  }
}

export interface LoadedWorld {
  records?: readonly EntityRecord[];
  entities?: readonly EntitySummary[];
  /** Taken UUIDs beyond those of `records` and `entities`. */
  takenUuids?: Iterable<string>;
}

/** Looks up by entityId when the ref has one, else by entityUuid; the planner checks that both agree. */
export function createBatchWorld(loaded: LoadedWorld): BatchWorld {
  const index = <T extends { entityId: number; entityUuid: string }>(values: readonly T[]) => ({
    byId: new Map(values.map((value) => [value.entityId, value])),
    byUuid: new Map(values.map((value) => [value.entityUuid, value])),
  });
  const find = <T>(maps: { byId: Map<number, T>; byUuid: Map<string, T> }, ref: EntityRef): T | undefined =>
    ref.entityId !== undefined ? maps.byId.get(ref.entityId) : ref.entityUuid !== undefined ? maps.byUuid.get(ref.entityUuid) : undefined;

  const records = index(loaded.records ?? []);
  const entities = index(loaded.entities ?? []);
  const taken = new Set(loaded.takenUuids ?? []);
  return {
    findRecord: (ref) => find(records, ref),
    findEntity: (ref) => find(entities, ref),
    uuidExists: (entityUuid) => taken.has(entityUuid) || records.byUuid.has(entityUuid) || entities.byUuid.has(entityUuid),
  };
}
