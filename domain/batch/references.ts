// Entity references inside changes: resolved before a change applies, so that
// stored records and change sets only ever point at real entities by both ids.

import type { EntityRef, EntityTarget, Item, Part, PartRef, RecordChange } from '../model.ts';
import { itemRefOf, partRefOf, type Problem } from './issues.ts';
import type { ResolvedRef } from './types.ts';

export type TargetResolution = { ok: true; ref: ResolvedRef } | { ok: false; problem: Problem };
export type TargetResolver = (target: EntityTarget) => TargetResolution;

/** Whether the entity carries every identifier the reference names (and the reference names one). */
export function refMatches(ref: EntityRef, entity: ResolvedRef): boolean {
  if (ref.entityId === undefined && ref.entityUuid === undefined) return false;
  return (
    (ref.entityId === undefined || ref.entityId === entity.entityId) &&
    (ref.entityUuid === undefined || ref.entityUuid === entity.entityUuid)
  );
}

function storedTarget(ref: ResolvedRef): EntityTarget {
  return { kind: 'stored', ref: { entityId: ref.entityId, entityUuid: ref.entityUuid } };
}

interface Resolved<T> {
  value: T;
  problems: Problem[];
}

function resolveItems(items: readonly Item[], partRef: PartRef, resolve: TargetResolver): Resolved<Item[]> {
  const problems: Problem[] = [];
  const value = items.map((item): Item => {
    if (item.kind !== 'entityRef') return item;
    const resolution = resolve(item.target);
    if (resolution.ok) return { ...item, target: storedTarget(resolution.ref) };
    problems.push({ ...resolution.problem, partRef, itemRef: itemRefOf(item) });
    return item;
  });
  return { value, problems };
}

export function resolvePartTargets(part: Part, resolve: TargetResolver): Resolved<Part> {
  const partRef = partRefOf(part.type, part.partUuid);
  const items = resolveItems(part.items, partRef, resolve);
  const value: Part = { ...part, items: items.value };
  const problems = items.problems;
  if (part.extensionItems !== undefined) {
    const extension = resolveItems(part.extensionItems, partRef, resolve);
    value.extensionItems = extension.value;
    problems.push(...extension.problems);
  }
  return { value, problems };
}

/** The change with every target replaced by a stored reference carrying both ids. */
export function resolveChangeTargets(change: RecordChange, resolve: TargetResolver): Resolved<RecordChange> {
  switch (change.op) {
    case 'newPart': {
      const part = resolvePartTargets(change.part, resolve);
      return { value: { ...change, part: part.value }, problems: part.problems };
    }
    case 'newItems':
    case 'updateItems': {
      const items = resolveItems(change.items, change.part, resolve);
      return { value: { ...change, items: items.value }, problems: items.problems };
    }
    case 'setState': {
      if (change.replacement === undefined) return { value: change, problems: [] };
      const resolution = resolve(change.replacement);
      return resolution.ok
        ? { value: { ...change, replacement: storedTarget(resolution.ref) }, problems: [] }
        : { value: change, problems: [resolution.problem] };
    }
    default:
      return { value: change, problems: [] };
  }
}
