import type pg from 'pg';
import { problem } from '../../api/problems.ts';
import type { RevisionPointer, UpdatesFromInfo } from '../../domain/model.ts';
import { pageOffset } from '../../domain/paging.ts';
import { countChangedRecords, findTransaction, latestTransaction, streamChangedRecords, type TransactionPoint } from './updates.ts';

async function requireTransaction(pool: pg.Pool, uuid: string): Promise<TransactionPoint> {
  const found = await findTransaction(pool, uuid);
  if (!found) throw problem(404, 'TransactionNotFound', `no transaction ${uuid}`, undefined, { transactionId: uuid });
  return found;
}

/** GET /updates: one page (from 1) of the records changed after `from` up to and including `to`. */
export async function updatesPage(pool: pg.Pool, fromUuid: string, toUuid: string, page: number, pageSize: number): Promise<AsyncGenerator<RevisionPointer>> {
  const from = await requireTransaction(pool, fromUuid);
  const to = await requireTransaction(pool, toUuid);
  if (BigInt(to.seq) < BigInt(from.seq)) throw problem(400, 'BadRequest', 'toTransId was written before fromTransId');
  return streamChangedRecords(pool, from.seq, to.seq, pageOffset({ page, pageSize }), pageSize);
}

export interface UpdatesFrom {
  info: UpdatesFromInfo;
  /** Absent when more than `max` records changed: the client pages through GET /updates up to info.to. */
  records?: AsyncGenerator<RevisionPointer>;
}

/** GET /updates/from/{id}: everything after a transaction, or only the summary when it is too much (spec §4.1 rule 5). */
export async function updatesFrom(pool: pg.Pool, fromUuid: string, max: number): Promise<UpdatesFrom> {
  const from = await requireTransaction(pool, fromUuid);
  const to = (await latestTransaction(pool)) ?? from;
  const count = await countChangedRecords(pool, from.seq, to.seq);
  const info = { from: from.uuid, to: to.uuid, count };
  return count > max ? { info } : { info, records: streamChangedRecords(pool, from.seq, to.seq, 0, count) };
}
