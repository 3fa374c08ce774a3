import { z } from 'zod';
import { parsePosition } from '../../domain/activity-streams/position.ts';

export const pagePathSchema = z.object({
  after: z.string().transform((text, check) => {
    const position = parsePosition(text);
    if (!position) check.addIssue({ code: 'custom', message: 'a position {commitSeq}-{entityId}, e.g. 0-0 for the first page' });
    return position ?? z.NEVER;
  }),
});
