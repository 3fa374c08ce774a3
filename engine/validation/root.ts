// Reading the root element from the first bytes of a document: its name and
// namespace decide the dialect before the whole document is parsed.

import sax from 'sax';
import { versionOfNamespace, type SchemaVersion } from './versions.ts';

export interface StartTag {
  qname: string;
  localName: string;
  namespace: string | undefined;
}

const NAME = /^<([^\s/>]+)/;
const ATTRIBUTE = /([^\s=/]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** Parses a start tag (`<name attr="v" ...>` or `.../>`) for its name and the namespace of that name. */
export function parseStartTag(tag: string): StartTag | undefined {
  const name = NAME.exec(tag)?.[1];
  if (name === undefined) return undefined;
  const colon = name.indexOf(':');
  const prefix = colon < 0 ? undefined : name.slice(0, colon);
  const declaration = prefix === undefined ? 'xmlns' : `xmlns:${prefix}`;
  let namespace: string | undefined;
  for (const match of tag.slice(name.length + 1).matchAll(ATTRIBUTE)) {
    if (match[1] === declaration) namespace = match[2] ?? match[3];
  }
  return { qname: name, localName: colon < 0 ? name : name.slice(colon + 1), namespace };
}

/** The root start tag of `head` (the first bytes of a document), skipping the XML declaration, comments and PIs. */
function rootStartTag(head: string): string | undefined {
  let pos = head.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (pos < head.length && /\s/.test(head[pos] as string)) pos++;
    if (head.startsWith('<?', pos)) {
      const end = head.indexOf('?>', pos + 2);
      if (end < 0) return undefined;
      pos = end + 2;
    } else if (head.startsWith('<!--', pos)) {
      const end = head.indexOf('-->', pos + 4);
      if (end < 0) return undefined;
      pos = end + 3;
    } else {
      break;
    }
  }
  if (head[pos] !== '<' || head[pos + 1] === '!') return undefined;
  let quote = '';
  for (let i = pos + 1; i < head.length; i++) {
    const c = head[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return head.slice(pos, i + 1);
    }
  }
  return undefined;
}

/** The dialect of a document, from the namespace of its root element in the first bytes; undefined when unknown. */
export function detectVersion(head: string): SchemaVersion | undefined {
  const tag = rootStartTag(head);
  return tag === undefined ? undefined : versionOfNamespace(parseStartTag(tag)?.namespace);
}

/** Bytes handed to the parser at a time: it stops once the start tag is read, however long the element. */
const ATTRIBUTE_READ_BYTES = 16 * 1024;

/**
 * The attributes of the first start tag in `element` (an element cut from a
 * document, its prefixes declared elsewhere) by their qualified names, as an
 * XML parser reads them: a value may hold anything, `>` and ` name="…"`
 * included, and the tag may be of any length. Undefined when no start tag
 * is read (the schema has refused such a document already).
 */
export function startTagAttributes(element: Uint8Array): Record<string, string> | undefined {
  const parser = sax.parser(true, { xmlns: false });
  let attributes: Record<string, string> | undefined;
  parser.onopentag = (node) => {
    attributes ??= node.attributes as Record<string, string>;
  };
  parser.onerror = () => {
    // Only the first start tag is wanted: whatever the parser finds wrong later does not matter.
    parser.resume();
  };
  const decoder = new TextDecoder();
  for (let offset = 0; offset < element.length && attributes === undefined; offset += ATTRIBUTE_READ_BYTES) {
    const end = Math.min(element.length, offset + ATTRIBUTE_READ_BYTES);
    parser.write(decoder.decode(element.subarray(offset, end), { stream: end < element.length }));
  }
  return attributes;
}
