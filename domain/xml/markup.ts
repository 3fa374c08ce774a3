// A string builder for markup that escapes every value it is given, so the
// writers never concatenate raw data into XML.

import { escapeAttribute, escapeText } from './escape.ts';
import type { Vocabulary } from './vocabulary.ts';

export type AttributeValue = string | number | boolean | undefined;
/** Name/value pairs in output order; undefined values are left out. */
export type Attributes = ReadonlyArray<readonly [string, AttributeValue]>;

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

function formatValue(value: string | number | boolean): string {
  return typeof value === 'string' ? value : String(value);
}

function startTag(name: string, attributes: Attributes | undefined): string {
  let tag = `<${name}`;
  if (attributes !== undefined) {
    for (const [attribute, value] of attributes) {
      if (value !== undefined) tag += ` ${attribute}="${escapeAttribute(formatValue(value))}"`;
    }
  }
  return tag;
}

export class Markup {
  // Appending to a string (a rope in V8) beats collecting an array to join.
  private text = '';

  /** Characters collected since the last take(). */
  get length(): number {
    return this.text.length;
  }

  open(name: string, attributes?: Attributes): this {
    this.text += `${startTag(name, attributes)}>`;
    return this;
  }

  close(name: string): this {
    this.text += `</${name}>`;
    return this;
  }

  empty(name: string, attributes?: Attributes): this {
    this.text += `${startTag(name, attributes)}/>`;
    return this;
  }

  /** An element holding only text; nothing when the value is undefined. */
  leaf(name: string, value: AttributeValue, attributes?: Attributes): this {
    if (value !== undefined) this.text += `${startTag(name, attributes)}>${escapeText(formatValue(value))}</${name}>`;
    return this;
  }

  /**
   * One leaf for each of `fields`, in that order, named as the field and
   * holding its value: the sequences the schema spells as the model does.
   */
  leaves<Field extends string>(source: { readonly [name in Field]?: AttributeValue }, fields: readonly Field[]): this {
    for (const field of fields) this.leaf(field, source[field]);
    return this;
  }

  /** The XML declaration and the root start tag with the version's default namespace. */
  openDocument(root: string, vocab: Vocabulary, attributes: Attributes = []): this {
    this.text += XML_DECLARATION;
    return this.open(root, [['xmlns', vocab.namespace], ...attributes]);
  }

  take(): string {
    const text = this.text;
    this.text = '';
    return text;
  }
}
