import { z } from 'zod';
import { uuidSchema } from '../../params.ts';

export const streamQuerySchema = z.object({ from: uuidSchema.optional() });

/** Last-Event-ID: the transaction the client saw last. */
export const lastEventIdSchema = uuidSchema.optional();
