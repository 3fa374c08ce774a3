// A thin wrapper over the raw libxml2 wasm module of libxml2-wasm. The
// package's object API computes an XPath for every diagnostic (quadratic on
// documents with many errors) and hides node pointers, so the validator
// drives the exported C functions directly: parse from memory, validate a
// tree against a compiled schema, collect diagnostics through one callback.
// Struct offsets below are those of this wasm32 build (libxml2-wasm 0.7.2).

import { readFile } from 'node:fs/promises';
import loadLibxml2, { type LibXml2 } from 'libxml2-wasm/lib/libxml2raw.mjs';

// xmlParserOption bits. Never NOENT (entity substitution) nor DTDLOAD/DTDATTR/DTDVALID.
const XML_PARSE_NONET = 1 << 11;
const XML_PARSE_COMPACT = 1 << 16;
const XML_PARSE_BIG_LINES = 1 << 22;
const XML_PARSE_NO_XXE = 1 << 23;
const PARSE_OPTIONS = XML_PARSE_NONET | XML_PARSE_NO_XXE | XML_PARSE_BIG_LINES | XML_PARSE_COMPACT;

/** xmlErrorLevel: 1 warning, 2 error, 3 fatal. Warnings never fail a document. */
const XML_ERR_ERROR = 2;

// Node types and struct field offsets (xmlNode / xmlAttr / xmlError / xmlXPathObject / xmlNodeSet).
const ELEMENT_NODE = 1;
const NODE_TYPE = 4;
const NODE_NAME = 8;
const NODE_CHILDREN = 12;
const NODE_PARENT = 20;
const NODE_NEXT = 24;
const ERROR_MESSAGE = 8;
const ERROR_LEVEL = 12;
const ERROR_LINE = 20;
const ERROR_COLUMN = 40;
const ERROR_NODE = 48;
const XPATH_NODESET = 1;
const XPATH_OBJECT_NODESET = 4;
const NODESET_COUNT = 0;
const NODESET_TABLE = 8;

export interface Diagnostic {
  message: string;
  line: number;
  column: number;
  /** The element the diagnostic is about (attributes and text resolved to their element), or 0. */
  element: number;
}

export type ParseOutcome = { ok: true; doc: number } | { ok: false; errors: Diagnostic[] };

export interface AttributeValue {
  value: string;
  element: number;
}

export class Libxml2Engine {
  private readonly lib: LibXml2;
  private readonly handler: number;
  private sink: ((error: number) => void) | undefined;

  constructor(lib: LibXml2) {
    this.lib = lib;
    lib._xmlInitParser();
    this.handler = lib.addFunction((_data: number, error: number) => this.sink?.(error), 'vii');
  }

  /** Bytes of wasm memory; it grows to the largest document seen and never shrinks. */
  get heapBytes(): number {
    return this.lib.HEAPU8.byteLength;
  }

  /** Parses the concatenation of `parts` as one document. The caller frees the document. */
  parse(parts: readonly Uint8Array[]): ParseOutcome {
    const { lib } = this;
    const length = parts.reduce((sum, part) => sum + part.length, 0);
    const buffer = lib._malloc(Math.max(1, length));
    if (buffer === 0) throw new Error('libxml2: out of memory');
    let offset = buffer;
    for (const part of parts) {
      lib.HEAPU8.set(part, offset);
      offset += part.length;
    }
    const errors: Diagnostic[] = [];
    const ctxt = lib._xmlNewParserCtxt();
    let doc: number;
    try {
      lib._xmlCtxtSetErrorHandler(ctxt, this.handler, 0);
      doc = this.collecting(errors, Number.POSITIVE_INFINITY, () => lib._xmlCtxtReadMemory(ctxt, buffer, length, 0, 0, PARSE_OPTIONS));
    } finally {
      lib._xmlFreeParserCtxt(ctxt);
      lib._free(buffer);
    }
    if (doc !== 0 && errors.length === 0) return { ok: true, doc };
    if (doc !== 0) lib._xmlFreeDoc(doc);
    return {
      ok: false,
      errors: errors.length > 0 ? errors : [{ message: 'Document is empty or unreadable', line: 1, column: 1, element: 0 }],
    };
  }

  /** Compiles a schema document; the schema keeps a reference to it, so neither is freed. */
  compileSchema(xsd: Uint8Array): number {
    const parsed = this.parse([xsd]);
    if (!parsed.ok) throw new Error(`XSD is not well-formed: ${parsed.errors[0]?.message}`);
    const { lib } = this;
    const ctxt = lib._xmlSchemaNewDocParserCtxt(parsed.doc);
    const errors: Diagnostic[] = [];
    try {
      lib._xmlSchemaSetParserStructuredErrors(ctxt, this.handler, 0);
      const schema = this.collecting(errors, 10, () => lib._xmlSchemaParse(ctxt));
      if (schema === 0) {
        lib._xmlFreeDoc(parsed.doc);
        throw new Error(`XSD does not compile: ${errors.map((e) => `${e.line}: ${e.message}`).join('; ')}`);
      }
      return schema;
    } finally {
      lib._xmlSchemaFreeParserCtxt(ctxt);
    }
  }

  /** Validates a document; returns at most `limit` diagnostics and how many there were in all. */
  validate(doc: number, schema: number, limit: number): { errors: Diagnostic[]; total: number } {
    const { lib } = this;
    const ctxt = lib._xmlSchemaNewValidCtxt(schema);
    if (ctxt === 0) throw new Error('libxml2: out of memory');
    const errors: Diagnostic[] = [];
    let total = 0;
    try {
      lib._xmlSchemaSetValidStructuredErrors(ctxt, this.handler, 0);
      const result = this.collecting(
        errors,
        limit,
        () => lib._xmlSchemaValidateDoc(ctxt, doc),
        () => total++,
      );
      if (result < 0) throw new Error('libxml2: internal error during schema validation');
    } finally {
      lib._xmlSchemaFreeValidCtxt(ctxt);
    }
    return { errors, total };
  }

  /** The document-order number (0 = root) of each wanted element, in one walk over the tree. */
  elementOrdinals(doc: number, wanted: ReadonlySet<number>): Map<number, number> {
    const heap = this.lib.HEAP32;
    const field = (node: number, offset: number): number => heap[(node + offset) >> 2] as number;
    const found = new Map<number, number>();
    const root = this.lib._xmlDocGetRootElement(doc);
    let ordinal = 0;
    let node = root;
    while (node !== 0 && found.size < wanted.size) {
      if (field(node, NODE_TYPE) === ELEMENT_NODE) {
        if (wanted.has(node)) found.set(node, ordinal);
        ordinal++;
        const child = field(node, NODE_CHILDREN);
        if (child !== 0) {
          node = child;
          continue;
        }
      }
      while (node !== root && field(node, NODE_NEXT) === 0) node = field(node, NODE_PARENT);
      node = node === root ? 0 : field(node, NODE_NEXT);
    }
    return found;
  }

  rootElement(doc: number): number {
    return this.lib._xmlDocGetRootElement(doc);
  }

  elementName(element: number): string {
    return this.lib.UTF8ToString(this.lib.HEAP32[(element + NODE_NAME) >> 2] as number);
  }

  /** Values of the attributes an XPath selects, with their elements. */
  attributeValues(doc: number, xpath: string): AttributeValue[] {
    const { lib } = this;
    const size = lib.lengthBytesUTF8(xpath) + 1;
    const expression = lib._malloc(size);
    lib.stringToUTF8(xpath, expression, size);
    const context = lib._xmlXPathNewContext(doc);
    const compiled = lib._xmlXPathCtxtCompile(context, expression);
    const values: AttributeValue[] = [];
    try {
      if (compiled === 0) throw new Error(`libxml2: bad XPath ${xpath}`);
      const result = lib._xmlXPathCompiledEval(compiled, context);
      try {
        const heap = lib.HEAP32;
        const nodeset = result === 0 || heap[result >> 2] !== XPATH_NODESET ? 0 : (heap[(result + XPATH_OBJECT_NODESET) >> 2] as number);
        const count = nodeset === 0 ? 0 : (heap[(nodeset + NODESET_COUNT) >> 2] as number);
        const table = nodeset === 0 ? 0 : (heap[(nodeset + NODESET_TABLE) >> 2] as number);
        for (let i = 0; i < count; i++) {
          const attribute = lib.HEAP32[(table >> 2) + i] as number;
          const text = lib._xmlNodeGetContent(attribute);
          values.push({ value: lib.UTF8ToString(text), element: lib.HEAP32[(attribute + NODE_PARENT) >> 2] as number });
          lib._free(text);
        }
      } finally {
        if (result !== 0) lib._xmlXPathFreeObject(result);
      }
    } finally {
      if (compiled !== 0) lib._xmlXPathFreeCompExpr(compiled);
      lib._xmlXPathFreeContext(context);
      lib._free(expression);
    }
    return values;
  }

  freeDoc(doc: number): void {
    this.lib._xmlFreeDoc(doc);
  }

  /** Runs one libxml2 call with diagnostics of level >= error routed into `into` (at most `limit`; `counted` sees each). */
  private collecting<T>(into: Diagnostic[], limit: number, call: () => T, counted?: () => void): T {
    this.sink = (error) => {
      const heap = this.lib.HEAP32;
      if ((heap[(error + ERROR_LEVEL) >> 2] as number) < XML_ERR_ERROR) return;
      counted?.();
      if (into.length >= limit) return;
      into.push({
        message: this.lib.UTF8ToString(heap[(error + ERROR_MESSAGE) >> 2] as number).trim(),
        line: heap[(error + ERROR_LINE) >> 2] as number,
        column: heap[(error + ERROR_COLUMN) >> 2] as number,
        element: this.elementOf(heap[(error + ERROR_NODE) >> 2] as number),
      });
    };
    try {
      return call();
    } finally {
      this.sink = undefined;
    }
  }

  /** The node itself if it is an element, else its parent (attribute, text). */
  private elementOf(node: number): number {
    if (node === 0) return 0;
    const heap = this.lib.HEAP32;
    if (heap[(node + NODE_TYPE) >> 2] === ELEMENT_NODE) return node;
    const parent = heap[(node + NODE_PARENT) >> 2] as number;
    return parent !== 0 && heap[(parent + NODE_TYPE) >> 2] === ELEMENT_NODE ? parent : 0;
  }
}

export interface LoadedEngine {
  engine: Libxml2Engine;
  schemas: ReadonlyMap<string, number>;
}

/** A fresh wasm instance with the given schema files compiled, keyed as given. */
export async function loadEngine(schemaFiles: ReadonlyMap<string, URL>): Promise<LoadedEngine> {
  const engine = new Libxml2Engine(await loadLibxml2());
  const schemas = new Map<string, number>();
  for (const [key, file] of schemaFiles) schemas.set(key, engine.compileSchema(await readFile(file)));
  return { engine, schemas };
}
