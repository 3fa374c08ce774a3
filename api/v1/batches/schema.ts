import { z } from 'zod';
import { uuidSchema } from '../../params.ts';

export const bidPathSchema = z.object({ bid: uuidSchema });
