import type { Context } from 'koa';
import { z } from 'zod';
import { problem } from './problems.ts';

// Request parsing shared by every route: zod schemas in, typed values out, a
// 400 problem naming the bad field otherwise.

export const uuidSchema = z.uuid({ message: 'must be a UUID' }).transform((value) => value.toLowerCase());

/** A number (a positive 64-bit-safe integer) or a UUID: the spec's EntityId. */
export const entityIdSchema = z.union([
  z.string().regex(/^[1-9][0-9]{0,15}$/).transform((value) => ({ entityId: Number(value) })),
  uuidSchema.transform((value) => ({ entityUuid: value })),
]);

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

export const pagingSchema = z.object({
  page: z.coerce.number().int().min(0).max(1_000_000_000),
  pageSize: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
});

/** page (from 0) and pageSize (1..max): a pageSize over the route's cap is its own error code. */
export function checkPageSize(pageSize: number, max: number): void {
  if (pageSize > max) throw problem(400, 'PageSizeTooLarge', `pageSize may be at most ${max}`);
}
