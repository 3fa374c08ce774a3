import type pg from 'pg';
import { ServiceError } from '../errors.ts';
import { streamRows } from '../../db/cursor.ts';
import type { RevisionPointer } from '../../domain/model.ts';

export interface TransactionPoint {
  uuid: string;
  seq: string;
}

export async function findTransaction(pool: pg.Pool, uuid: string): Promise<TransactionPoint | undefined> {
  const { rows } = await pool.query<TransactionPoint>('select uuid, seq from transaction where uuid = $1', [uuid]);
  return rows[0];
}

/** The transaction a client named, or TransactionNotFound naming it (also as the real ErrorTransactionNotFound's transactionId). */
export async function requireTransaction(pool: pg.Pool, uuid: string): Promise<TransactionPoint> {
  const found = await findTransaction(pool, uuid);
  if (!found) throw new ServiceError('TransactionNotFound', `no transaction ${uuid}`, undefined, { transactionId: uuid });
  return found;
}

export async function latestTransaction(pool: pg.Pool): Promise<TransactionPoint | undefined> {
  const { rows } = await pool.query<TransactionPoint>('select uuid, seq from transaction order by seq desc limit 1');
  return rows[0];
}

/** Records changed in (fromSeq, toSeq], counted once each. */
export async function countChangedRecords(pool: pg.Pool, fromSeq: string, toSeq: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>('select count(distinct entity_id) as n from revision where seq > $1 and seq <= $2', [fromSeq, toSeq]);
  return Number(rows[0]?.n ?? 0);
}

interface PointerRow {
  entity_id: string;
  entity_uuid: string;
  rev: string;
  metadata_rev: string;
}

/**
 * Each record changed in (fromSeq, toSeq] once, with its latest rev and
 * metadataRev in that range, ordered by entityId so pages are stable.
 * Streamed from a cursor: memory does not grow with the page size.
 */
export async function* streamChangedRecords(pool: pg.Pool, fromSeq: string, toSeq: string, offset: number, limit: number): AsyncGenerator<RevisionPointer> {
  const rows = streamRows<PointerRow>(
    pool,
    `select distinct on (r.entity_id) r.entity_id, e.uuid as entity_uuid, r.rev, r.metadata_rev
       from revision r join entity e on e.id = r.entity_id
      where r.seq > $1 and r.seq <= $2
      order by r.entity_id, r.seq desc
      offset $3 limit $4`,
    [fromSeq, toSeq, offset, limit],
  );
  for await (const row of rows) {
    yield { entityId: Number(row.entity_id), entityUuid: row.entity_uuid, rev: row.rev, metadataRev: row.metadata_rev };
  }
}
