import { z } from 'zod';
import { booleanQuerySchema, uuidSchema } from '../../params.ts';

export const submitQuerySchema = z.object({
  force: booleanQuerySchema.default(false),
  forceKey: z.string().min(1).max(512).optional(),
});

export const batchPathSchema = z.object({ updateRequestId: uuidSchema });
