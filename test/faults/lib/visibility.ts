// "No partial write is ever visible": counts the entities of one type over
// and over while a batch of `total` of them is applied; every count must be
// 0 or the whole batch.
import type { Inspector } from './db.ts';
import { every } from '../../support/poll.ts';

export function watchAllOrNothing(db: Inspector, entityType: string, total: number, intervalMs = 100) {
  const partial: number[] = [];
  const errors: string[] = [];
  let reads = 0;
  const loop = every(intervalMs, async () => {
    try {
      const count = await db.countOfType(entityType);
      reads += 1;
      if (count !== 0 && count !== total) partial.push(count);
    } catch (error) {
      errors.push((error as Error).message);
    }
  });
  return {
    async stop(): Promise<{ reads: number; partial: number[]; errors: string[] }> {
      await loop.stop();
      return { reads, partial, errors };
    },
  };
}
