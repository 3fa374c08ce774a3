// Values of a JSON Schema (the OpenAPI 3.1 dialect the documents use), as
// fast-check arbitraries: what a well-behaved client would send, the start
// from which the fuzzer's mutations depart.
import fc from 'fast-check';
import type { OpenApiDocument } from '../../../api/docs/documents.ts';
import { resolveRef } from '../openapi-operations.ts';

export type JsonSchema = Record<string, unknown>;

export interface SchemaOptions {
  /** Identifiers that exist in the database; string and integer schemas they satisfy use them too. */
  known: readonly string[];
  /** $ref hops before a branch is cut off with null (a recursive schema needs a bound). */
  maxDepth: number;
  maxItems: number;
}

/** Builds arbitraries for the schemas of one document; a $ref reached at the same depth is built once. */
export function schemaArbitraries(document: OpenApiDocument, options: SchemaOptions): (schema: JsonSchema) => fc.Arbitrary<unknown> {
  const built = new Map<string, fc.Arbitrary<unknown>>();
  const terminates = terminationCheck(document);

  const of = (schema: JsonSchema, depth: number): fc.Arbitrary<unknown> => {
    if (typeof schema.$ref === 'string') {
      if (depth >= options.maxDepth) return fc.constant(null);
      const key = `${depth}:${JSON.stringify(schema)}`;
      let arbitrary = built.get(key);
      if (!arbitrary) {
        const { $ref, ...rest } = schema;
        arbitrary = of({ ...resolveRef(document, $ref), ...rest }, depth + 1);
        built.set(key, arbitrary);
      }
      return arbitrary;
    }
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const alternatives = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
    if (alternatives) {
      // Two $ref hops from the bound, only alternatives that cannot recurse: the tree ends in leaves, not in nulls.
      const leaves = depth + 2 >= options.maxDepth ? alternatives.filter(terminates) : [];
      return fc.oneof(...(leaves.length > 0 ? leaves : alternatives).map((alternative) => of(alternative, depth)));
    }
    if (Array.isArray(schema.allOf)) return of(schema.allOf[0] as JsonSchema, depth);
    const type = schema.type ?? (schema.properties ? 'object' : schema.items ? 'array' : undefined);
    if (Array.isArray(type)) return fc.oneof(...type.map((one) => of({ ...schema, type: one }, depth)));
    switch (type) {
      case 'string':
        return withKnown(
          stringOf(schema),
          options.known.filter((value) => matchesString(schema, value)),
        );
      case 'integer':
        return withKnown(integerOf(schema), options.known.filter((value) => matchesInteger(schema, value)).map(Number));
      case 'number':
        return fc.double({ noNaN: true, noDefaultInfinity: true, min: numberOr(schema.minimum, -1e9), max: numberOr(schema.maximum, 1e9) });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array': {
        const maxLength = Math.min(numberOr(schema.maxItems, options.maxItems), options.maxItems);
        const minLength = Math.min(numberOr(schema.minItems, 0), maxLength);
        return fc.array(schema.items ? of(schema.items as JsonSchema, depth) : fc.jsonValue({ maxDepth: 1 }), { minLength, maxLength });
      }
      case 'object': {
        const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
        const fields = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, of(property, depth)]));
        return fc.record(fields, { requiredKeys: (schema.required ?? []) as string[] });
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  };
  return (schema) => of(schema, 0);
}

/** Whether a schema reaches no recursive $ref (a condition that holds conditions cannot be a leaf). */
function terminationCheck(document: OpenApiDocument): (schema: JsonSchema) => boolean {
  const refsWithin = (node: unknown): string[] => {
    if (Array.isArray(node)) return node.flatMap(refsWithin);
    if (typeof node !== 'object' || node === null) return [];
    const own = (node as JsonSchema).$ref;
    return [...(typeof own === 'string' ? [own] : []), ...Object.values(node).flatMap(refsWithin)];
  };
  const reachable = new Map<string, Set<string>>();
  const reachableFrom = (ref: string): Set<string> => {
    let found = reachable.get(ref);
    if (!found) {
      found = new Set();
      reachable.set(ref, found);
      const pending = refsWithin(resolveRef(document, ref));
      for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
        if (found.has(next)) continue;
        found.add(next);
        pending.push(...refsWithin(resolveRef(document, next)));
      }
    }
    return found;
  };
  const recursive = (ref: string) => reachableFrom(ref).has(ref);
  return (schema) => refsWithin(schema).every((ref) => !recursive(ref) && [...reachableFrom(ref)].every((inner) => !recursive(inner)));
}

function withKnown<T>(generated: fc.Arbitrary<T>, known: T[]): fc.Arbitrary<T> {
  return known.length === 0
    ? generated
    : fc.oneof({ weight: 1, arbitrary: generated }, { weight: 3, arbitrary: fc.constantFrom(...known) });
}

const numberOr = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);

function matchesString(schema: JsonSchema, value: string): boolean {
  if (typeof schema.pattern === 'string') return new RegExp(schema.pattern).test(value);
  return schema.format === 'uuid' && UUID.test(value);
}

function matchesInteger(schema: JsonSchema, value: string): boolean {
  return (
    /^[0-9]+$/.test(value) && Number(value) >= numberOr(schema.minimum, -Infinity) && Number(value) <= numberOr(schema.maximum, Infinity)
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  const examples = [
    ...((schema.examples as unknown[] | undefined) ?? []),
    ...(schema.example === undefined ? [] : [schema.example]),
  ].filter((value) => typeof value === 'string');
  let generated: fc.Arbitrary<string>;
  if (schema.format === 'uuid') generated = fc.uuid();
  else if (typeof schema.pattern === 'string') generated = fc.stringMatching(new RegExp(schema.pattern));
  else if (schema.format === 'date-time') generated = fc.date({ noInvalidDate: true }).map((date) => date.toISOString());
  else
    generated = fc.string({
      unit: 'grapheme',
      minLength: numberOr(schema.minLength, 0),
      maxLength: Math.min(numberOr(schema.maxLength, 40), 40),
    });
  return examples.length === 0 ? generated : fc.oneof(generated, fc.constantFrom(...examples));
}

function integerOf(schema: JsonSchema): fc.Arbitrary<number> {
  const min = BigInt(Math.ceil(numberOr(schema.minimum, Number.MIN_SAFE_INTEGER)));
  const max = BigInt(Math.floor(numberOr(schema.maximum, Number.MAX_SAFE_INTEGER)));
  return fc.bigInt({ min, max }).map(Number);
}
