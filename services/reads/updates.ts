import type { FeedRepository, TransactionPoint } from '../../db/feed.ts';
import { ServiceError } from '../errors.ts';

export type { TransactionPoint } from '../../db/feed.ts';

/** The transaction a client named, or TransactionNotFound naming it (also as the real ErrorTransactionNotFound's transactionId). */
export async function requireTransaction(feed: FeedRepository, uuid: string): Promise<TransactionPoint> {
  const found = await feed.findTransaction(uuid);
  if (!found) throw new ServiceError('TransactionNotFound', `no transaction ${uuid}`, undefined, { transactionId: uuid });
  return found;
}
