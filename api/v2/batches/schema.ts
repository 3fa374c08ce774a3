import { z } from 'zod';
import { booleanQuerySchema, uuidSchema } from '../../params.ts';

/** Whether `text` holds a C0 control character or DEL. */
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

export const submitQuerySchema = z.object({
  force: booleanQuerySchema.default(false),
  // Stored with the batch: a character PostgreSQL's text cannot hold (NUL) or any other control character is refused here, not by the database.
  forceKey: z
    .string()
    .min(1)
    .max(512)
    .refine((key) => !hasControlCharacter(key), 'no control characters')
    .optional(),
});

export const batchPathSchema = z.object({ updateRequestId: uuidSchema });
