// Streaming XML reading on sax: the root element is reported alone, then each
// child of the root as one small tree once it closes, and is dropped after.
// Memory is therefore bounded by the largest child (one change, one record),
// never by the document.

import sax from 'sax';
import { InvalidXmlError } from '../errors.ts';
import { findForbiddenCharacter } from './escape.ts';

export interface XmlElement {
  /** Local name; every element is in the root's namespace. */
  readonly name: string;
  /** Attributes without a namespace prefix; foreign ones (xsi:, xmlns) are left out. */
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: XmlElement[];
  text: string;
  /** Where the start tag ends (1-based), for error messages. */
  readonly line: number;
  readonly column: number;
}

export interface XmlDocumentHandler {
  /** The root element with its attributes; its children follow one by one. */
  root(element: XmlElement, namespace: string): void;
  child(element: XmlElement): void;
}

export function xmlError(line: number, column: number, message: string): InvalidXmlError {
  return new InvalidXmlError([{ line, column: Math.max(column, 1), message }]);
}

const UTF8 = /^utf-?8$/i;

/**
 * A copy of text that sax cut out of a decoded chunk. V8 keeps such a
 * substring as a slice that holds on to the whole chunk, so the values of a
 * batch's commands would keep most of the document's text alive.
 */
function copied(value: string): string {
  return value.length === 0 ? '' : Buffer.from(value, 'utf8').toString('utf8');
}

/**
 * sax builds an attribute value a character at a time, and V8 keeps a long
 * result as a rope of its pieces: a UUID attribute takes some 800 bytes
 * instead of 64, and a batch's commands carry several per item. Values too
 * short to become ropes (V8 copies concatenations under 13 characters) stay.
 */
function flatAttribute(value: string): string {
  return value.length < 13 ? value : copied(value);
}

/** A push parser: feed text with write(), then close(). */
export class XmlElementReader {
  private readonly parser: sax.SAXParser;
  private readonly handler: XmlDocumentHandler;
  private readonly stack: XmlElement[] = [];
  private namespace: string | undefined;
  private rootClosed = false;

  constructor(handler: XmlDocumentHandler) {
    this.handler = handler;
    const parser = sax.parser(true, { xmlns: true, position: true });
    this.parser = parser;
    parser.onerror = (error) => {
      throw this.failure(error.message.split('\n')[0] ?? 'malformed XML');
    };
    parser.ondoctype = () => {
      // Refused outright: a DTD could declare entities (expansion attacks) or
      // defaults that change the document after validation.
      throw this.failure('DOCTYPE declarations are not allowed');
    };
    parser.onprocessinginstruction = (instruction) => {
      if (instruction.name !== 'xml') return;
      const encoding = /encoding\s*=\s*["']([^"']*)["']/.exec(instruction.body)?.[1];
      if (encoding !== undefined && !UTF8.test(encoding)) {
        throw this.failure(`encoding ${encoding} is not supported; send UTF-8`);
      }
    };
    parser.onopentag = (tag) => this.open(tag as sax.QualifiedTag);
    parser.onclosetag = () => this.close();
    parser.ontext = (text) => this.text(text);
    parser.oncdata = (text) => this.text(text);
  }

  write(text: string): void {
    this.parser.write(text);
  }

  end(): void {
    this.parser.close();
    if (this.namespace === undefined) throw this.failure('the document has no root element');
  }

  failure(message: string): InvalidXmlError {
    return xmlError(this.parser.line + 1, this.parser.column, message);
  }

  private open(tag: sax.QualifiedTag): void {
    if (this.rootClosed) throw this.failure('only one root element is allowed');
    if (this.namespace === undefined) {
      this.namespace = tag.uri;
    } else if (tag.uri !== this.namespace) {
      throw this.failure(`element {${tag.uri}}${tag.local} does not belong to the document's namespace`);
    }
    const attributes = new Map<string, string>();
    for (const attribute of Object.values(tag.attributes)) {
      if (attribute.uri !== '') continue;
      if (findForbiddenCharacter(attribute.value) >= 0) {
        throw this.failure(`attribute ${attribute.name} contains a character XML 1.0 does not allow`);
      }
      attributes.set(attribute.local, flatAttribute(attribute.value));
    }
    const element: XmlElement = {
      name: tag.local,
      attributes,
      children: [],
      text: '',
      line: this.parser.line + 1,
      column: this.parser.column,
    };
    const parent = this.stack.at(-1);
    // Children of the root are handed over when they close, not kept.
    if (parent !== undefined && this.stack.length > 1) parent.children.push(element);
    this.stack.push(element);
    if (this.stack.length === 1) this.handler.root(element, tag.uri);
  }

  private close(): void {
    const element = this.stack.pop();
    if (element === undefined) return;
    if (findForbiddenCharacter(element.text) >= 0) {
      throw xmlError(element.line, element.column, `element ${element.name} contains a character XML 1.0 does not allow`);
    }
    element.text = copied(element.text);
    if (this.stack.length === 1) this.handler.child(element);
    if (this.stack.length === 0) this.rootClosed = true;
  }

  private text(text: string): void {
    const current = this.stack.at(-1);
    if (current === undefined) return;
    if (this.stack.length === 1) {
      if (text.trim() !== '') throw this.failure(`text is not allowed directly in ${current.name}`);
      return;
    }
    current.text += text;
  }
}

export function readXmlText(text: string, handler: XmlDocumentHandler): void {
  const reader = new XmlElementReader(handler);
  reader.write(text);
  reader.end();
}

export async function readXmlStream(source: AsyncIterable<Uint8Array | string>, handler: XmlDocumentHandler): Promise<void> {
  const reader = new XmlElementReader(handler);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    } catch {
      throw reader.failure('the document is not valid UTF-8');
    }
  };
  for await (const chunk of source) {
    reader.write(typeof chunk === 'string' ? chunk : decode(chunk));
  }
  reader.write(decode());
  reader.end();
}
