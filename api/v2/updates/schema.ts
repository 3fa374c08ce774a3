import { z } from 'zod';
import { pagingSchema, uuidSchema } from '../../params.ts';

export const updatesQuerySchema = pagingSchema.extend({
  fromTransId: uuidSchema,
  toTransId: uuidSchema,
});

export const updatesFromPathSchema = z.object({ fromTransId: uuidSchema });
