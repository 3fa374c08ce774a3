import { z } from 'zod';
import { entityIdSchema, uuidSchema } from '../../params.ts';

/** v1 sends ids as strings; a number or a UUID each, numbers given as JSON numbers are taken too. */
const v1EntityIdSchema = z.union([z.number().int().positive().transform(String), z.string().trim()]).pipe(entityIdSchema);

export function idListSchema(max: number) {
  return z.array(v1EntityIdSchema).max(max, { message: `at most ${max} identifiers` });
}

export const revisionsQuerySchema = z.object({ fromTransId: uuidSchema });
