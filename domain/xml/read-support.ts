// Small typed accessors over XmlElement trees. They fail with the position of
// the offending element, so a client can find the problem in its document.

import type { InvalidXmlError } from '../errors.ts';
import type { EntityRef, EntityState, PartType, UserInfo } from '../model.ts';
import { ENTITY_STATES, PART_TYPES } from '../model.ts';
import { xmlError, type XmlElement } from './element-stream.ts';
import type { Vocabulary } from './vocabulary.ts';

export interface ReadContext {
  readonly vocab: Vocabulary;
  /** Users declared with localId earlier in the document, for userRef. */
  readonly users: Map<string, UserInfo>;
}

export function newReadContext(vocab: Vocabulary): ReadContext {
  return { vocab, users: new Map() };
}

export function invalid(element: XmlElement, message: string): InvalidXmlError {
  return xmlError(element.line, element.column, message);
}

export function unexpected(element: XmlElement, parent: XmlElement): InvalidXmlError {
  return invalid(element, `unexpected element ${element.name} in ${parent.name}`);
}

/** Spread into an object literal to leave absent optional fields out entirely. */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export function attribute(element: XmlElement, name: string): string | undefined {
  return element.attributes.get(name);
}

export function requiredAttribute(element: XmlElement, name: string): string {
  const value = element.attributes.get(name);
  if (value === undefined) throw invalid(element, `${element.name} needs the attribute ${name}`);
  return value;
}

/** Text of a leaf element, exactly as written; a leaf has no child elements. */
export function text(element: XmlElement): string {
  const [child] = element.children;
  if (child !== undefined) throw unexpected(child, element);
  return element.text;
}

/** Text of a leaf whose schema type collapses whitespace (ids, codes, dates, numbers). */
export function token(element: XmlElement): string {
  return text(element).trim();
}

/** An element whose content is only attributes. */
export function withoutChildren(element: XmlElement): XmlElement {
  const [child] = element.children;
  if (child !== undefined) throw unexpected(child, element);
  return element;
}

export function parseLong(element: XmlElement, text: string, what: string): number {
  const value = text.trim();
  if (!/^[+-]?\d+$/.test(value)) throw invalid(element, `${what} must be an integer, not '${value}'`);
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw invalid(element, `${what} ${value} is out of range`);
  return number;
}

export function parseBoolean(element: XmlElement, text: string, what: string): boolean {
  switch (text.trim()) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
    default:
      throw invalid(element, `${what} must be true or false, not '${text.trim()}'`);
  }
}

export function optionalLongAttribute(element: XmlElement, name: string): number | undefined {
  const value = attribute(element, name);
  return value === undefined ? undefined : parseLong(element, value, name);
}

export function optionalBooleanAttribute(element: XmlElement, name: string): boolean | undefined {
  const value = attribute(element, name);
  return value === undefined ? undefined : parseBoolean(element, value, name);
}

export function parsePartType(element: XmlElement, text: string): PartType {
  const value = text.trim();
  if (!(PART_TYPES as readonly string[]).includes(value)) throw invalid(element, `unknown part type '${value}'`);
  return value as PartType;
}

export function parseState(element: XmlElement, text: string): EntityState {
  const value = text.trim();
  if (!(ENTITY_STATES as readonly string[]).includes(value)) throw invalid(element, `unknown entity state '${value}'`);
  return value as EntityState;
}

export function parseEnum<T extends string>(element: XmlElement, text: string, allowed: readonly T[], what: string): T {
  const value = text.trim();
  if (!(allowed as readonly string[]).includes(value)) throw invalid(element, `unknown ${what} '${value}'`);
  return value as T;
}

/** EntityRecordRef: entityId and/or entityUuid attributes. */
export function readEntityRef(element: XmlElement, vocab: Vocabulary): EntityRef {
  withoutChildren(element);
  const entityId = optionalLongAttribute(element, vocab.id.entityId);
  const entityUuid = attribute(element, vocab.id.entityUuid);
  if (entityId === undefined && entityUuid === undefined) {
    throw invalid(element, `${element.name} needs ${vocab.id.entityId} or ${vocab.id.entityUuid}`);
  }
  return { ...optional('entityId', entityId), ...optional('entityUuid', entityUuid) };
}

/** The one child an element must have exactly one of. */
export function singleChild(element: XmlElement): XmlElement {
  const [first, second] = element.children;
  if (first === undefined) throw invalid(element, `${element.name} is empty`);
  if (second !== undefined) throw unexpected(second, element);
  return first;
}
