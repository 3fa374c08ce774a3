import type { ReadRouting } from '../../db/read-routing/index.ts';
import { ServiceError } from '../errors.ts';
import type { RevisionPointer, UpdatesFromInfo } from '../../domain/model.ts';
import { pageOffset } from '../../domain/paging.ts';
import { requireTransaction } from './updates.ts';

/** GET /updates: one page (from 1) of the records changed after `from` up to and including `to`. */
export async function updatesPage(
  reads: Pick<ReadRouting, 'side'>,
  fromUuid: string,
  toUuid: string,
  page: number,
  pageSize: number,
): Promise<AsyncGenerator<RevisionPointer[]>> {
  // The page is fixed by its two transactions: any standby that has replayed both serves it.
  const { feed } = await reads.side({ transactions: [fromUuid, toUuid] });
  const from = await requireTransaction(feed, fromUuid);
  const to = await requireTransaction(feed, toUuid);
  if (BigInt(to.commitSeq) < BigInt(from.commitSeq)) throw new ServiceError('BadRequest', 'toTransId was committed before fromTransId');
  // Kept unless the whole range fits in this one page: the client asks for the next page next.
  const range = await feed.range(from, to, pageSize);
  return feed.streamRange(range, pageOffset({ page, pageSize }), pageSize);
}

export interface UpdatesFrom {
  info: UpdatesFromInfo;
  /** Absent when more than `max` records changed: the client pages through GET /updates up to info.to. */
  records?: AsyncGenerator<RevisionPointer[]>;
}

/** GET /updates/from/{id}: everything after a transaction, or only the summary when it is too much (spec §4.1 rule 5). */
export async function updatesFrom(reads: Pick<ReadRouting, 'side'>, fromUuid: string, max: number): Promise<UpdatesFrom> {
  // Up to the newest transaction the serving side has: the answer names it, and the client resumes from it.
  const { feed } = await reads.side({ transactions: [fromUuid] });
  const from = await requireTransaction(feed, fromUuid);
  const to = (await feed.latestTransaction()) ?? from;
  // Kept when too large to answer here: the client pages through exactly this range next.
  const range = await feed.range(from, to, max);
  const info = { from: from.uuid, to: to.uuid, count: range.records };
  return range.records > max ? { info } : { info, records: feed.streamRange(range, 0, range.records) };
}
