import { z } from 'zod';
import { booleanQuerySchema, uuidSchema } from '../../params.ts';

export const submitQuerySchema = z.object({
  force: booleanQuerySchema.default(false),
  // Stored with the batch: a character PostgreSQL's text cannot hold (NUL) or any other control character is refused here, not by the database.
  forceKey: z
    .string()
    .min(1)
    .max(512)
    .regex(/^[^\u0000-\u001f\u007f]+$/, 'no control characters')
    .optional(),
});

export const batchPathSchema = z.object({ updateRequestId: uuidSchema });
