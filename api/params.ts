import type { Context } from 'koa';
import { z } from 'zod';
import { problem } from './problems.ts';

// Request parsing shared by every route: zod schemas in, typed values out, a
// 400 problem naming the bad field otherwise.

export const uuidSchema = z.uuid({ message: 'must be a UUID' }).transform((value) => value.toLowerCase());

/** The largest entity number: the real registry's EntityId is an int32. */
export const MAX_ENTITY_ID = 2_147_483_647;

/** A number (a positive int32) or a UUID: the spec's EntityId, the real EntityRef. */
export const entityIdSchema = z.union([
  z
    .string()
    .regex(/^[1-9][0-9]{0,9}$/)
    .transform(Number)
    .refine((id) => id <= MAX_ENTITY_ID)
    .transform((entityId) => ({ entityId })),
  uuidSchema.transform((value) => ({ entityUuid: value })),
]);

/**
 * The entity named in a path. A value that is neither an entity number nor a
 * UUID names no record: 404, as for any unknown record (the real EntityRef is
 * a free string, so its clients expect no 400 here).
 */
export function entityRefParam(ctx: Context, name: string): z.output<typeof entityIdSchema> {
  const parsed = entityIdSchema.safeParse(ctx.params[name]);
  if (!parsed.success) throw problem(404, 'EntityNotFound', `no entity ${String(ctx.params[name])}`);
  return parsed.data;
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

/** A required whole-number query parameter, with a message that names what is wrong (not zod's "received NaN"). */
function countParameter(name: string, min: number, max: number, minMessage: string) {
  return z
    .string({ error: `${name} is required` })
    .regex(/^\d+$/, { error: `${name} must be a whole number` })
    .transform(Number)
    .pipe(z.number().min(min, { error: minMessage }).max(max, { error: `${name} may be at most ${max}` }));
}

/** Pages count from 1, as in the real registry's interface: page=1 is the first page. */
export const pagingSchema = z.object({
  page: countParameter('page', 1, 1_000_000_000, 'page counts from 1 (page=1 is the first page)'),
  pageSize: countParameter('pageSize', 1, Number.MAX_SAFE_INTEGER, 'pageSize must be at least 1'),
});

/** page (from 1) and pageSize (1..max): a pageSize over the route's cap is its own error code. */
export function checkPageSize(pageSize: number, max: number): void {
  if (pageSize > max) throw problem(400, 'PageSizeTooLarge', `pageSize may be at most ${max}`);
}
