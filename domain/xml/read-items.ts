// Parts, items and references to them, in either version's spelling.

import type { EntityTarget, Item, ItemKind, ItemRef, Part, PartRef } from '../model.ts';
import type { XmlElement } from './element-stream.ts';
import {
  attribute,
  invalid,
  optional,
  optionalBooleanAttribute,
  parseBoolean,
  parsePartType,
  readEntityRef,
  requiredAttribute,
  singleChild,
  text,
  token,
  withoutChildren,
  unexpected,
} from './read-support.ts';
import type { Vocabulary } from './vocabulary.ts';

const ITEM_ELEMENT_KEYS = [
  'binary',
  'boolean',
  'entityRef',
  'enum',
  'int',
  'link',
  'string',
  'unitDate',
] as const satisfies readonly ItemKind[];

const itemKindsByElement = new WeakMap<Vocabulary, ReadonlyMap<string, ItemKind>>();

function itemKindOf(name: string, vocab: Vocabulary): ItemKind | undefined {
  let kinds = itemKindsByElement.get(vocab);
  if (kinds === undefined) {
    kinds = new Map(ITEM_ELEMENT_KEYS.map((kind) => [vocab.item[kind], kind]));
    itemKindsByElement.set(vocab, kinds);
  }
  return kinds.get(name);
}

export function isPartsElement(element: XmlElement, vocab: Vocabulary): boolean {
  return vocab.entity.parts.includes(element.name);
}

/** A Parts element (parst, parts or prts). */
export function readParts(element: XmlElement, vocab: Vocabulary): Part[] {
  return element.children.map((child) => {
    if (child.name !== vocab.part.element) throw unexpected(child, element);
    return readPart(child, vocab);
  });
}

/**
 * A part; a new part may come without partUuid, and then gets '' here:
 * the batch rules assign the UUID (Part.partUuid is required in the model).
 */
export function readPart(element: XmlElement, vocab: Vocabulary): Part {
  const names = vocab.part;
  let items: Item[] = [];
  let extensionItems: Item[] | undefined;
  for (const child of element.children) {
    if (child.name === names.items) items = readItems(child, vocab);
    else if (child.name === names.extensionItems) extensionItems = readItems(child, vocab);
    else throw unexpected(child, element);
  }
  return {
    partUuid: attribute(element, names.partUuid) ?? '',
    type: parsePartType(element, requiredAttribute(element, names.type)),
    ...optional('parent', attribute(element, names.parent)),
    items,
    ...optional('extensionItems', extensionItems),
  };
}

export function readPartRef(element: XmlElement, vocab: Vocabulary): PartRef {
  return {
    type: parsePartType(element, requiredAttribute(element, vocab.part.type)),
    ...optional('partUuid', attribute(element, vocab.part.partUuid)),
  };
}

export function readItemRef(element: XmlElement, vocab: Vocabulary): ItemRef {
  return {
    type: requiredAttribute(element, vocab.item.type),
    ...optional('spec', attribute(element, vocab.item.spec)),
    ...optional('uuid', attribute(element, vocab.item.uuid)),
  };
}

/** Children of an Items element (items, eits, newItems, updateItems). */
export function readItems(element: XmlElement, vocab: Vocabulary): Item[] {
  return element.children.map((child) => readItem(child, element, vocab));
}

/** Where an entityRef item or a replacement points: entityRef/er or localEntityRef/lid. */
export function readTarget(element: XmlElement, storedName: string, localName: string, vocab: Vocabulary): EntityTarget {
  if (element.name === storedName) return { kind: 'stored', ref: readEntityRef(element, vocab) };
  if (element.name === localName) return { kind: 'local', localId: token(element) };
  throw invalid(element, `unexpected element ${element.name}`);
}

function readItem(element: XmlElement, parent: XmlElement, vocab: Vocabulary): Item {
  const names = vocab.item;
  const kind = itemKindOf(element.name, vocab);
  if (kind === undefined) throw unexpected(element, parent);
  const base = readItemRef(element, vocab);
  switch (kind) {
    case 'string':
      return { ...base, kind, value: text(element) };
    case 'enum':
      withoutChildren(element);
      return { ...base, kind };
    case 'int': {
      const value = token(element);
      if (!/^[+-]?\d+$/.test(value)) throw invalid(element, `an int item needs an integer, not '${value}'`);
      return { ...base, kind, value };
    }
    case 'boolean':
      return { ...base, kind, value: parseBoolean(element, text(element), 'a boolean item') };
    case 'binary':
      // base64Binary ignores whitespace; keep the canonical form.
      return { ...base, kind, base64: text(element).replace(/\s+/g, '') };
    case 'unitDate':
      withoutChildren(element);
      return {
        ...base,
        kind,
        from: requiredAttribute(element, names.from),
        to: requiredAttribute(element, names.to),
        ...optional('format', attribute(element, names.format)),
        ...optional('fromEstimate', optionalBooleanAttribute(element, names.fromEstimate)),
        ...optional('toEstimate', optionalBooleanAttribute(element, names.toEstimate)),
      };
    case 'link': {
      let url: string | undefined;
      let name: string | undefined;
      for (const child of element.children) {
        if (child.name === names.url) url = text(child);
        else if (child.name === names.linkName) name = text(child);
        else throw unexpected(child, element);
      }
      if (url === undefined) throw invalid(element, `a link item needs ${names.url}`);
      return { ...base, kind, url, ...optional('name', name) };
    }
    case 'entityRef':
      return { ...base, kind, target: readTarget(singleChild(element), names.storedTarget, names.localTarget, vocab) };
  }
}
