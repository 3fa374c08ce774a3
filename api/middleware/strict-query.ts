import type { Middleware } from 'koa';
import { API_VERSIONS, readOpenApiDocument, type OpenApiDocument } from '../docs/documents.ts';
import { problem } from '../problems.ts';

// Every /api/v1 and /api/v2 operation takes the query parameters its OpenAPI
// document (openapi/*.yaml, the contract) lists, and no other: one a route
// does not define is refused with 400 naming it. Besides catching a
// client's typo, this closes the ambiguity of the NDA-HMAC string to sign,
// which joins path and query without a separator: a signature for
// /entities/12345 would otherwise also pass for /entities/1234?5.
// Paths match as the routers match them (@koa/router: case-insensitive, a
// trailing slash allowed), or /API/V2/ENTITIES/1?x would reach a router
// unchecked.

interface Operation {
  pattern: RegExp;
  method: string;
  allowed: ReadonlySet<string>;
}

type Parameter = { in?: string; name?: string; $ref?: string };

/** The operations of both documents with the query parameters each defines. */
function documentedOperations(
  documents: Record<string, OpenApiDocument> = Object.fromEntries(API_VERSIONS.map((version) => [version, readOpenApiDocument(version)])),
): Operation[] {
  const operations: Operation[] = [];
  for (const [version, document] of Object.entries(documents)) {
    const components = ((document.components as { parameters?: Record<string, Parameter> } | undefined)?.parameters ?? {}) as Record<
      string,
      Parameter
    >;
    const resolve = (parameter: Parameter): Parameter =>
      parameter.$ref ? (components[parameter.$ref.replace('#/components/parameters/', '')] ?? {}) : parameter;
    for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Record<string, unknown>>)) {
      const shared = (item.parameters as Parameter[] | undefined) ?? [];
      const pattern = new RegExp(`^/api/${version}${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i');
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'parameters' || typeof operation !== 'object' || operation === null) continue;
        const parameters = [...shared, ...(((operation as { parameters?: Parameter[] }).parameters ?? []) as Parameter[])].map(resolve);
        operations.push({
          pattern,
          method: method.toUpperCase(),
          allowed: new Set(parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name!)),
        });
      }
    }
  }
  return operations;
}

/** Refuses (400 BadRequest, naming them) query parameters the matched operation does not define. */
export function refuseUnknownQueryParameters(): Middleware {
  const operations = documentedOperations();
  return async function strictQueryMiddleware(ctx, next) {
    if (ctx.querystring === '' || !/^\/api\/v/i.test(ctx.path)) return next();
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    const operation = operations.find((candidate) => candidate.method === method && candidate.pattern.test(ctx.path));
    // An unknown route or method is the router's to answer (404, 405).
    if (operation === undefined) return next();
    const unknown = [...new URLSearchParams(ctx.querystring).keys()].filter((name) => !operation.allowed.has(name));
    if (unknown.length === 0) return next();
    const names = [...new Set(unknown)];
    throw problem(
      400,
      'BadRequest',
      `unknown query parameter${names.length > 1 ? 's' : ''} ${names.map((name) => JSON.stringify(name.slice(0, 100))).join(', ')}; this operation takes ${operation.allowed.size === 0 ? 'none' : [...operation.allowed].join(', ')}`,
      names.map((name) => ({ path: `query.${name.slice(0, 100)}`, message: 'not a parameter of this operation' })),
    );
  };
}
