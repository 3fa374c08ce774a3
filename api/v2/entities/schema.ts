import { z } from 'zod';
import { entityIdSchema, uuidSchema } from '../../params.ts';

export const entityPathSchema = z.object({ entityId: entityIdSchema });
export const revisionPathSchema = z.object({ entityId: entityIdSchema, revisionId: uuidSchema });
