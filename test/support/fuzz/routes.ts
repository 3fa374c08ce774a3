// The routes to fuzz, read from the OpenAPI documents the running service
// serves: a route added to a document is fuzzed without editing the test.
import type { XmlVersion } from '../../../domain/model.ts';
import { dereference, type JsonSchema, type OpenApiDocument } from './json-schema.ts';

export interface FuzzParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface FuzzRoute {
  /** The interface the document describes; its batches are written in this XML version. */
  version: XmlVersion;
  document: OpenApiDocument;
  method: string;
  /** The full path, `{name}` standing for each path parameter. */
  template: string;
  parameters: FuzzParameter[];
  /** Media types of the request body; empty when the operation takes none. */
  bodyTypes: string[];
  /** The schema of the JSON body, when it takes one. */
  jsonSchema: JsonSchema | undefined;
}

const OPERATION_KEYS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export async function discoverRoutes(baseUrl: string, documents: ReadonlyArray<{ version: XmlVersion; path: string }>): Promise<FuzzRoute[]> {
  const routes: FuzzRoute[] = [];
  for (const { version, path } of documents) {
    const response = await fetch(`${baseUrl}${path}`);
    if (response.status !== 200) throw new Error(`fuzz: GET ${path} answered ${response.status}`);
    const document = (await response.json()) as OpenApiDocument;
    const documentBase = serverPath(document.servers);
    for (const [template, item] of Object.entries(document.paths as Record<string, JsonSchema>)) {
      const base = item.servers ? serverPath(item.servers) : documentBase;
      for (const key of OPERATION_KEYS) {
        const operation = item[key] as JsonSchema | undefined;
        if (!operation) continue;
        const requestBody = operation.requestBody ? dereference(document, operation.requestBody as JsonSchema) : undefined;
        const content = (requestBody?.content ?? {}) as Record<string, JsonSchema>;
        const bodyTypes = Object.keys(content);
        const jsonType = bodyTypes.find((type) => /[/+]json$/.test(type));
        routes.push({
          version,
          document,
          method: key.toUpperCase(),
          template: `${base}${template}`,
          parameters: parametersOf(document, item.parameters, operation.parameters),
          bodyTypes,
          jsonSchema: jsonType ? (content[jsonType]!.schema as JsonSchema | undefined) : undefined,
        });
      }
    }
  }
  return routes;
}

/** Path-level parameters, overridden by the operation's own of the same name and location. */
function parametersOf(document: OpenApiDocument, ...lists: unknown[]): FuzzParameter[] {
  const byKey = new Map<string, FuzzParameter>();
  for (const list of lists) {
    for (const raw of (list as JsonSchema[] | undefined) ?? []) {
      const parameter = dereference(document, raw);
      if (parameter.in === 'cookie') continue;
      byKey.set(`${String(parameter.in)}:${String(parameter.name)}`, {
        name: parameter.name as string,
        in: parameter.in as FuzzParameter['in'],
        required: parameter.required === true,
        schema: (parameter.schema ?? {}) as JsonSchema,
      });
    }
  }
  return [...byKey.values()];
}

function serverPath(servers: unknown): string {
  const url = (servers as Array<{ url: string }> | undefined)?.[0]?.url ?? '/';
  return new URL(url, 'http://server.invalid').pathname.replace(/\/$/, '');
}
