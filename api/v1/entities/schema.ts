import { z } from 'zod';
import { entityIdSchema } from '../../params.ts';

export const apidPathSchema = z.object({ apid: entityIdSchema });
