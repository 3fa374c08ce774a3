// What the real registry's generated client (openapi-generator, okhttp-gson)
// does with a JSON answer: it reads it into the model of the real v2 OpenAPI
// and fails on any field the model does not declare and on any enum value it
// does not know. The models are read from ../shared/reference (or REFERENCE_DIR) at test time.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { REFERENCE } from './public-schemas.ts';

const REAL_OPENAPI = new URL('cam-v2-openapi.yml', REFERENCE);

export const REAL_OPENAPI_PRESENT = existsSync(REAL_OPENAPI);
if (!REAL_OPENAPI_PRESENT)
  console.warn(`SKIPPED: ${fileURLToPath(REAL_OPENAPI)} is absent; answers are not read with the real client's models`);

interface ModelSchema {
  type?: string;
  format?: string;
  enum?: string[];
  required?: string[];
  properties?: Record<string, ModelSchema>;
  allOf?: ModelSchema[];
  items?: ModelSchema;
  $ref?: string;
}

let schemas: Record<string, ModelSchema> | undefined;

function model(name: string): ModelSchema {
  schemas ??= (parse(readFileSync(REAL_OPENAPI, 'utf8')) as { components: { schemas: Record<string, ModelSchema> } }).components.schemas;
  const found = schemas[name];
  if (!found) throw new Error(`the real OpenAPI has no schema ${name}`);
  return found;
}

function resolve(schema: ModelSchema): ModelSchema {
  if (schema.$ref) return resolve(model(schema.$ref.replace('#/components/schemas/', '')));
  if (schema.allOf && !schema.properties && schema.allOf.length === 1) return resolve(schema.allOf[0]!);
  return schema;
}

/** Every way `value` breaks the real model `name` as the generated client reads it (empty: it reads). */
export function realModelErrors(name: string, value: unknown): string[] {
  const errors: string[] = [];
  check(resolve(model(name)), value, name, errors);
  return errors;
}

function check(schema: ModelSchema, value: unknown, where: string, errors: string[]): void {
  if (schema.enum) {
    if (!schema.enum.includes(value as string)) errors.push(`${where}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`);
    return;
  }
  switch (schema.type) {
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        errors.push(`${where}: expected an object`);
        return;
      }
      const properties = schema.properties ?? {};
      for (const key of schema.required ?? []) if (!(key in value)) errors.push(`${where}: required field ${key} is missing`);
      for (const [key, field] of Object.entries(value)) {
        const declared = properties[key];
        if (!declared) errors.push(`${where}: the model has no field ${key}`);
        else check(resolve(declared), field, `${where}.${key}`, errors);
      }
      return;
    }
    case 'integer':
      if (!Number.isInteger(value)) errors.push(`${where}: ${JSON.stringify(value)} is not an integer`);
      return;
    case 'string':
      if (typeof value !== 'string') errors.push(`${where}: ${JSON.stringify(value)} is not a string`);
      else if (schema.format === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value))
        errors.push(`${where}: ${value} is not a UUID`);
      return;
    default:
      return;
  }
}
