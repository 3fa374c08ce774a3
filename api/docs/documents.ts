import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Config } from '../../config.ts';
import { addTokenNote, tokenNote } from './token-note.ts';

// The OpenAPI documents of the two interfaces. The YAML files under openapi/
// are the contract; the service serves them as JSON with the limits it was
// configured with, so a client reading the document sees this deployment's caps.

export const API_VERSIONS = ['v2', 'v1'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

/** Marks a schema whose `maximum` (or `maxItems`) is the value of a configuration variable. */
const CONFIGURED_MAXIMUM = 'x-configured-maximum';

export type OpenApiDocument = Record<string, unknown>;

function openApiPath(version: ApiVersion): URL {
  return new URL(`../../openapi/${version}.yaml`, import.meta.url);
}

/** The document as written, parsed. */
export function readOpenApiDocument(version: ApiVersion): OpenApiDocument {
  return parse(readFileSync(openApiPath(version), 'utf8')) as OpenApiDocument;
}

/**
 * The document as served: bounds marked x-configured-maximum take the
 * configured values, and the bearer scheme says where this server's token is.
 */
export function servedOpenApiDocument(version: ApiVersion, config: Config): OpenApiDocument {
  const document = readOpenApiDocument(version);
  applyConfiguredMaximums(document, config);
  addTokenNote(document, tokenNote(config));
  return document;
}

function applyConfiguredMaximums(node: unknown, config: Config): void {
  if (Array.isArray(node)) {
    for (const item of node) applyConfiguredMaximums(item, config);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  const name = schema[CONFIGURED_MAXIMUM];
  if (typeof name === 'string') {
    const value = (config as Record<string, unknown>)[name];
    if (typeof value !== 'number') throw new Error(`openapi: ${CONFIGURED_MAXIMUM} names ${name}, which is not a numeric setting`);
    schema[schema.type === 'array' ? 'maxItems' : 'maximum'] = value;
  }
  for (const child of Object.values(schema)) applyConfiguredMaximums(child, config);
}
