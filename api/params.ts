import type { Context } from 'koa';
import { z } from 'zod';
import { problem } from './problems.ts';

// Request parsing shared by every route: zod schemas in, typed values out, a
// 400 problem naming the bad field otherwise.

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ENTITY_NUMBER_PATTERN = /^[1-9][0-9]{0,15}$/;

/**
 * Any 8-4-4-4-12 hex UUID, in any case (the real interface's Uuid is 36
 * characters of format uuid; PostgreSQL takes every such value, whatever its
 * version and variant bits say).
 */
export const uuidSchema = z
  .string()
  .regex(UUID_PATTERN, { message: 'must be a UUID' })
  .transform((value) => value.toLowerCase());

/** A number or a UUID: the spec's EntityId, the real EntityRef (entity numbers are int32; a larger one names no record). */
export const entityIdSchema = z.union([
  z
    .string()
    .regex(ENTITY_NUMBER_PATTERN)
    .transform((value) => ({ entityId: Number(value) })),
  uuidSchema.transform((value) => ({ entityUuid: value })),
]);

export type EntityIdRef = z.output<typeof entityIdSchema>;

/** What entityIdSchema parses, without its machinery: the GET of a record reads one per request. */
export function parseEntityRef(value: unknown): EntityIdRef | undefined {
  if (typeof value !== 'string') return undefined;
  if (ENTITY_NUMBER_PATTERN.test(value)) return { entityId: Number(value) };
  if (UUID_PATTERN.test(value)) return { entityUuid: value.toLowerCase() };
  return undefined;
}

/**
 * The entity named in a path. A value that is neither an entity number nor a
 * UUID names no record: 404, as for any unknown record (the real EntityRef is
 * a free string, so its clients expect no 400 here).
 */
export function entityRefParam(ctx: Context, name: string): EntityIdRef {
  const ref = parseEntityRef(ctx.params[name]);
  if (ref === undefined) throw problem(404, 'EntityNotFound', `no entity ${String(ctx.params[name])}`);
  return ref;
}

export const booleanQuerySchema = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

export function parseWith<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw problem(
    400,
    'BadRequest',
    `invalid ${where}`,
    parsed.error.issues.map((issue) => ({ path: [where, ...issue.path.map(String)].join('.'), message: issue.message })),
  );
}

export function parseQuery<T extends z.ZodType>(ctx: Context, schema: T): z.output<T> {
  return parseWith(schema, ctx.query, 'query');
}

export function parseParams<T extends z.ZodType>(ctx: Context, schema: T): z.output<T> {
  return parseWith(schema, ctx.params, 'path');
}

/**
 * A required whole-number query parameter. Absent, it says so (z.coerce alone
 * would read undefined as NaN and answer "expected number, received NaN").
 */
function requiredWholeNumber(name: string, min: number, tooSmall: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be given once`) })
    .regex(/^\s*-?[0-9]+\s*$/, { message: `${name} must be a whole number` })
    .transform(Number)
    .pipe(z.number().int().min(min, { message: tooSmall }).max(Number.MAX_SAFE_INTEGER));
}

/**
 * page and pageSize of search and updates, both required as in the real
 * OpenAPI documents. Pages are numbered from 1, as the real client counts
 * them; page=0 is an error that says so.
 */
export const pagingSchema = z.object({
  page: requiredWholeNumber('page', 1, 'pages start at 1: page=1 is the first page').pipe(z.number().max(1_000_000_000)),
  pageSize: requiredWholeNumber('pageSize', 1, 'pageSize must be at least 1'),
});

/** pageSize over the route's cap is its own error code (pageSize is at least 1 by pagingSchema). */
export function checkPageSize(pageSize: number, max: number): void {
  if (pageSize > max) throw problem(400, 'PageSizeTooLarge', `pageSize may be at most ${max}`);
}
