// The operations of an OpenAPI document, read one way for every test that
// walks them (the contract test, the fuzzer). Works on a document as served,
// $refs and all: parameters are resolved here, schemas are left to the caller.
import type { OpenApiDocument } from '../../api/docs/documents.ts';

type Node = Record<string, unknown>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface DocumentOperation<Operation = Node, Parameter = Node> {
  /** Upper case: `GET`. */
  method: string;
  /** As written in the document (`/batches/{updateRequestId}/status`). */
  docPath: string;
  /** With the server prefix (`/api/v2/batches/{updateRequestId}/status`). */
  fullPath: string;
  operation: Operation;
  /** Path-level and operation-level parameters, $refs resolved; the operation's win. */
  parameters: Parameter[];
}

export function resolveRef(document: OpenApiDocument, ref: string): Node {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are followed, not ${ref}`);
  let node: unknown = document;
  for (const segment of ref.slice(2).split('/')) {
    node = (node as Node | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  if (typeof node !== 'object' || node === null) throw new Error(`$ref ${ref} names nothing`);
  return node as Node;
}

/** The object itself, or what its $ref names (with the referring object's own keywords on top). */
export function dereference(document: OpenApiDocument, node: Node): Node {
  const { $ref, ...rest } = node;
  return typeof $ref === 'string' ? { ...dereference(document, resolveRef(document, $ref)), ...rest } : node;
}

export function documentOperations<Operation = Node, Parameter = Node>(
  document: OpenApiDocument,
): DocumentOperation<Operation, Parameter>[] {
  const documentBase = serverPath(document.servers);
  const result: DocumentOperation<Operation, Parameter>[] = [];
  for (const [docPath, item] of Object.entries(document.paths as Record<string, Node>)) {
    const base = item.servers ? serverPath(item.servers) : documentBase;
    const shared = resolved(document, item.parameters);
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Node | undefined;
      if (!operation) continue;
      const own = resolved(document, operation.parameters);
      const parameters = [...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own];
      result.push({
        method: method.toUpperCase(),
        docPath,
        fullPath: `${base}${docPath}`,
        operation: operation as Operation,
        parameters: parameters as Parameter[],
      });
    }
  }
  return result;
}

function resolved(document: OpenApiDocument, list: unknown): Node[] {
  return ((list as Node[] | undefined) ?? []).map((parameter) => dereference(document, parameter));
}

function serverPath(servers: unknown): string {
  const url = (servers as Array<{ url: string }> | undefined)?.[0]?.url ?? '/';
  return new URL(url, 'http://server.invalid').pathname.replace(/\/$/, '');
}
