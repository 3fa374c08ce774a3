// The routes to fuzz, read from the OpenAPI documents the running service
// serves: a route added to a document is fuzzed without editing the test.
import type { OpenApiDocument } from '../../../api/docs/documents.ts';
import type { XmlVersion } from '../../../domain/model.ts';
import { dereference, documentOperations } from '../openapi-operations.ts';
import type { JsonSchema } from './json-schema.ts';

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

export async function discoverRoutes(
  baseUrl: string,
  documents: ReadonlyArray<{ version: XmlVersion; path: string }>,
): Promise<FuzzRoute[]> {
  const routes: FuzzRoute[] = [];
  for (const { version, path } of documents) {
    const response = await fetch(`${baseUrl}${path}`);
    if (response.status !== 200) throw new Error(`fuzz: GET ${path} answered ${response.status}`);
    const document = (await response.json()) as OpenApiDocument;
    for (const { method, fullPath, operation, parameters } of documentOperations(document)) {
      const requestBody = operation.requestBody ? dereference(document, operation.requestBody as JsonSchema) : undefined;
      const content = (requestBody?.content ?? {}) as Record<string, JsonSchema>;
      const bodyTypes = Object.keys(content);
      const jsonType = bodyTypes.find((type) => /[/+]json$/.test(type));
      routes.push({
        version,
        document,
        method,
        template: fullPath,
        parameters: parameters
          .filter((parameter) => parameter.in !== 'cookie')
          .map((parameter) => ({
            name: parameter.name as string,
            in: parameter.in as FuzzParameter['in'],
            required: parameter.required === true,
            schema: (parameter.schema ?? {}) as JsonSchema,
          })),
        bodyTypes,
        jsonSchema: jsonType ? (content[jsonType]!.schema as JsonSchema | undefined) : undefined,
      });
    }
  }
  return routes;
}
