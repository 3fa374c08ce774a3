// Finding parts and items the way batch changes name them.

import { BATCH_ISSUE_CODES, type EntityRecord, type Item, type ItemRef, type Part, type PartRef } from '../model.ts';
import { itemRefOf, partRefOf, type Problem } from './issues.ts';

export type Found<T> = { ok: true; value: T } | { ok: false; problem: Problem };

/** By partUuid when given (its type must match), else the only part of that type. */
export function findPart(record: EntityRecord, ref: PartRef): Found<Part> {
  const unknown = (message: string): Found<Part> => ({
    ok: false,
    problem: { code: BATCH_ISSUE_CODES.unknownPart, message, partRef: partRefOf(ref.type, ref.partUuid) },
  });
  if (ref.partUuid !== undefined && ref.partUuid !== '') {
    const part = record.parts.find((candidate) => candidate.partUuid === ref.partUuid);
    if (part === undefined) return unknown(`The entity has no part ${ref.partUuid}.`);
    if (part.type !== ref.type) return unknown(`Part ${ref.partUuid} is of type ${part.type}, not ${ref.type}.`);
    return { ok: true, value: part };
  }
  const parts = record.parts.filter((candidate) => candidate.type === ref.type);
  if (parts.length === 1 && parts[0] !== undefined) return { ok: true, value: parts[0] };
  return unknown(
    parts.length === 0
      ? `The entity has no part of type ${ref.type}.`
      : `The entity has ${parts.length} parts of type ${ref.type}; name the part by its partUuid.`,
  );
}

/** Where an item sits inside its part. */
export interface ItemSlot {
  list: Item[];
  index: number;
}

/**
 * By uuid when given (its type must match), else the only item of that type
 * and spec; the reference schema requires uuids on repeatable items, so a
 * type+spec that names several items is an error rather than a guess.
 */
export function findItem(part: Part, ref: ItemRef): Found<ItemSlot> {
  const lists = [part.items, part.extensionItems ?? []];
  const matches: ItemSlot[] = [];
  for (const list of lists) {
    list.forEach((item, index) => {
      const hit =
        ref.uuid !== undefined && ref.uuid !== ''
          ? item.uuid === ref.uuid && item.type === ref.type
          : item.type === ref.type && item.spec === ref.spec;
      if (hit) matches.push({ list, index });
    });
  }
  const [match] = matches;
  if (matches.length === 1 && match !== undefined) return { ok: true, value: match };
  const what = ref.uuid
    ? `item ${ref.uuid} of type ${ref.type}`
    : `item of type ${ref.type}${ref.spec === undefined ? '' : ` and spec ${ref.spec}`}`;
  return {
    ok: false,
    problem: {
      code: BATCH_ISSUE_CODES.unknownItem,
      message:
        matches.length === 0
          ? `Part ${part.partUuid} (${part.type}) has no ${what}.`
          : `Part ${part.partUuid} (${part.type}) has ${matches.length} items matching the ${what}; name the item by its uuid.`,
      partRef: partRefOf(part.type, part.partUuid),
      itemRef: itemRefOf(ref),
    },
  };
}

/** Copies of the items, each with a uuid (kept when present). */
/**
 * A copy of an item. Shallow but for an entityRef's target, the only nested
 * object: a structured clone would copy every string too, and at a large
 * batch's hundreds of thousands of items that came to twice the memory.
 */
function copyItem(item: Item): Item {
  return item.kind === 'entityRef' ? { ...item, target: structuredClone(item.target) } : { ...item };
}

export function withItemUuids(items: readonly Item[], newUuid: () => string): Item[] {
  return items.map((item) => {
    const copy = copyItem(item);
    if (copy.uuid === undefined || copy.uuid === '') copy.uuid = newUuid();
    return copy;
  });
}

/** A copy of the part with a partUuid and item uuids (the reader leaves absent uuids empty). */
export function withUuids(part: Part, newUuid: () => string): Part {
  const copy: Part = {
    partUuid: part.partUuid === '' ? newUuid() : part.partUuid,
    type: part.type,
    items: withItemUuids(part.items, newUuid),
  };
  if (part.parent !== undefined && part.parent !== '') copy.parent = part.parent;
  if (part.extensionItems !== undefined) copy.extensionItems = withItemUuids(part.extensionItems, newUuid);
  return copy;
}

export function partItems(part: Part): Item[] {
  return part.extensionItems === undefined ? part.items : [...part.items, ...part.extensionItems];
}

export function itemUuids(parts: readonly Part[]): Set<string> {
  const uuids = new Set<string>();
  for (const part of parts) {
    for (const item of partItems(part)) if (item.uuid !== undefined) uuids.add(item.uuid);
  }
  return uuids;
}

/** Part or item uuids the new parts repeat, and parents that name no part, given the parts already there. */
export function checkNewParts(parts: readonly Part[], existingParts: readonly Part[]): Problem[] {
  const problems: Problem[] = [];
  const partUuids = new Set(existingParts.map((part) => part.partUuid));
  const seenItems = itemUuids(existingParts);
  for (const part of parts) {
    if (partUuids.has(part.partUuid)) {
      problems.push({
        code: BATCH_ISSUE_CODES.duplicateIdentifier,
        message: `Part uuid ${part.partUuid} is used more than once in the entity.`,
        partRef: partRefOf(part.type, part.partUuid),
      });
    }
    partUuids.add(part.partUuid);
    problems.push(...checkNewItems(part, partItems(part), seenItems));
  }
  for (const part of parts) {
    if (part.parent !== undefined && !partUuids.has(part.parent)) {
      problems.push({
        code: BATCH_ISSUE_CODES.unknownPart,
        message: `Parent part ${part.parent} of part ${part.partUuid} does not exist.`,
        partRef: partRefOf(part.type, part.partUuid),
      });
    }
  }
  return problems;
}

/** Repeated item uuids; adds the new ones to `seen`. */
export function checkNewItems(part: Part, items: readonly Item[], seen: Set<string>): Problem[] {
  const problems: Problem[] = [];
  for (const item of items) {
    if (item.uuid === undefined) continue;
    if (seen.has(item.uuid)) {
      problems.push({
        code: BATCH_ISSUE_CODES.duplicateIdentifier,
        message: `Item uuid ${item.uuid} is used more than once in the entity.`,
        partRef: partRefOf(part.type, part.partUuid),
        itemRef: itemRefOf(item),
      });
    }
    seen.add(item.uuid);
  }
  return problems;
}

/** The part and every part below it, so that a delete leaves no orphans. */
export function partSubtree(parts: readonly Part[], rootUuid: string): Set<string> {
  const doomed = new Set([rootUuid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const part of parts) {
      if (part.parent !== undefined && doomed.has(part.parent) && !doomed.has(part.partUuid)) {
        doomed.add(part.partUuid);
        grew = true;
      }
    }
  }
  return doomed;
}
