import type { ReadRouting, ReadSide } from '../../db/read-routing/index.ts';

export type { ReadSide };

/** Where a client's reads run: past its own last write when this process saw one, else on the freshest standby within REPLICA_MAX_LAG. */
export function readSideFor(reads: Pick<ReadRouting, 'side'>, principal: string | undefined): Promise<ReadSide> {
  return reads.side(principal === undefined ? { fresh: true } : { principal });
}

/**
 * A client learnt that its batch is applied (its status or result, a v1 save's answer): its next reads see the batch.
 * Only COMPLETED batches wrote; the primary's WAL position now lies past their commit.
 */
export async function sawOwnWrite(reads: Pick<ReadRouting, 'wrote'>, principal: string, batch: { status: string }): Promise<void> {
  if (batch.status === 'COMPLETED') await reads.wrote(principal);
}
