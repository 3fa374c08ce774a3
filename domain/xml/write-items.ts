// Parts, items and references, written in either version's spelling.

import type { EntityRef, EntityTarget, Item, ItemRef, Part, PartRef } from '../model.ts';
import type { Attributes, Markup } from './markup.ts';
import type { Vocabulary } from './vocabulary.ts';
import { V2_META } from './vocabulary-v2.ts';

export function entityRefAttributes(ref: EntityRef, vocab: Vocabulary): Attributes {
  return [
    [vocab.id.entityId, ref.entityId],
    [vocab.id.entityUuid, ref.entityUuid],
  ];
}

/** An entity of a batch at a revision: the one a batch's update starts from, and the one a batch's result reports. */
export interface RevisionRef extends EntityRef {
  localId: string;
  rev: string;
  metadataRev?: string;
}

/**
 * The attributes of a RevisionRef, in the batch document (stored entity) and
 * in its result (revision) alike; v1 has no metadata revision.
 */
export function revisionRefAttributes(ref: RevisionRef, names: { localId: string; rev: string }, vocab: Vocabulary): Attributes {
  return [
    [names.localId, ref.localId],
    ...entityRefAttributes(ref, vocab),
    [names.rev, ref.rev],
    [V2_META.metadataRev, vocab.version === 'v2' ? ref.metadataRev : undefined],
  ];
}

/** '' stands for "no UUID yet" (a new part before the rules assign one). */
function uuidOrNothing(uuid: string | undefined): string | undefined {
  return uuid === '' ? undefined : uuid;
}

export function partRefAttributes(ref: PartRef, vocab: Vocabulary): Attributes {
  return [
    [vocab.part.partUuid, uuidOrNothing(ref.partUuid)],
    [vocab.part.type, ref.type],
  ];
}

export function itemRefAttributes(ref: ItemRef, vocab: Vocabulary): Attributes {
  return [
    [vocab.item.type, ref.type],
    [vocab.item.spec, ref.spec],
    [vocab.item.uuid, ref.uuid],
  ];
}

/** A Parts element; nothing for no parts, since the schema wants at least one. */
export function writeParts(out: Markup, parts: readonly Part[], vocab: Vocabulary): void {
  if (parts.length === 0) return;
  const [name] = vocab.entity.parts;
  out.open(name);
  for (const part of parts) writePart(out, part, vocab.part.element, vocab);
  out.close(name);
}

export function writePart(out: Markup, part: Part, name: string, vocab: Vocabulary): void {
  out.open(name, [...partRefAttributes(part, vocab), [vocab.part.parent, part.parent]]);
  writeItemList(out, vocab.part.items, [], part.items, vocab);
  writeItemList(out, vocab.part.extensionItems, [], part.extensionItems ?? [], vocab);
  out.close(name);
}

/** An Items element (items, eits, newItems, updateItems); nothing when empty, except for the change elements. */
export function writeItemList(
  out: Markup,
  name: string,
  attributes: Attributes,
  items: readonly Item[],
  vocab: Vocabulary,
  whenEmpty: 'omit' | 'empty' = 'omit',
): void {
  if (items.length === 0) {
    if (whenEmpty === 'empty') out.empty(name, attributes);
    return;
  }
  out.open(name, attributes);
  for (const item of items) writeItem(out, item, vocab);
  out.close(name);
}

export function writeTarget(out: Markup, target: EntityTarget, storedName: string, localName: string, vocab: Vocabulary): void {
  if (target.kind === 'stored') out.empty(storedName, entityRefAttributes(target.ref, vocab));
  else out.leaf(localName, target.localId);
}

function writeItem(out: Markup, item: Item, vocab: Vocabulary): void {
  const names = vocab.item;
  const attributes = itemRefAttributes(item, vocab);
  switch (item.kind) {
    case 'string':
      out.leaf(names.string, item.value, attributes);
      return;
    case 'enum':
      out.empty(names.enum, attributes);
      return;
    case 'int':
      out.leaf(names.int, item.value, attributes);
      return;
    case 'boolean':
      out.leaf(names.boolean, item.value, attributes);
      return;
    case 'binary':
      out.leaf(names.binary, item.base64, attributes);
      return;
    case 'unitDate':
      out.empty(names.unitDate, [
        ...attributes,
        [names.from, item.from],
        [names.to, item.to],
        [names.format, item.format],
        [names.fromEstimate, item.fromEstimate],
        [names.toEstimate, item.toEstimate],
      ]);
      return;
    case 'link':
      out.open(names.link, attributes).leaf(names.url, item.url).leaf(names.linkName, item.name).close(names.link);
      return;
    case 'entityRef':
      out.open(names.entityRef, attributes);
      writeTarget(out, item.target, names.storedTarget, names.localTarget, vocab);
      out.close(names.entityRef);
      return;
  }
}
