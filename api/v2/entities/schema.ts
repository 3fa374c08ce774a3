import { z } from 'zod';
import { uuidSchema } from '../../params.ts';

export const revisionPathSchema = z.object({ revisionId: uuidSchema });
