// The stored entities a batch names, as the planner looks them up: the
// summaries of all of them indexed once, the full records of those a group
// updates set before that group is planned.

import type { EntityRecord, EntityRef } from '../../domain/model.ts';
import type { BatchWorld, EntitySummary } from '../../domain/batch/types.ts';

export interface LoadedWorld {
  records?: readonly EntityRecord[];
  entities?: readonly EntitySummary[];
  /** Taken UUIDs beyond those of `records` and `entities`. */
  takenUuids?: Iterable<string>;
}

type Index<T> = { byId: Map<number, T>; byUuid: Map<string, T> };

function index<T extends { entityId: number; entityUuid: string }>(values: readonly T[]): Index<T> {
  return {
    byId: new Map(values.map((value) => [value.entityId, value])),
    byUuid: new Map(values.map((value) => [value.entityUuid, value])),
  };
}

function find<T>(maps: Index<T>, ref: EntityRef): T | undefined {
  return ref.entityId !== undefined
    ? maps.byId.get(ref.entityId)
    : ref.entityUuid !== undefined
      ? maps.byUuid.get(ref.entityUuid)
      : undefined;
}

/**
 * A world for planning a batch group by group: the summaries of every stored
 * entity the batch names are indexed once; the full records of the entities a
 * group updates are set before that group is planned, and dropped after.
 */
export function createGroupedWorld(
  loaded: Omit<LoadedWorld, 'records'>,
): BatchWorld & { setRecords(records: readonly EntityRecord[]): void } {
  let records = index<EntityRecord>([]);
  const entities = index(loaded.entities ?? []);
  const taken = new Set(loaded.takenUuids ?? []);
  return {
    setRecords(loadedRecords) {
      records = index(loadedRecords);
    },
    findRecord: (ref) => find(records, ref),
    findEntity: (ref) => find(entities, ref),
    uuidExists: (entityUuid) => taken.has(entityUuid) || records.byUuid.has(entityUuid) || entities.byUuid.has(entityUuid),
  };
}
