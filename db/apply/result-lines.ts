// The success document's revision lines of an apply, staged in PostgreSQL:
// each group's lines go by COPY into a temporary table of the transaction
// (with the group's other COPYs), and the batch row's result is built from
// there (finishBatchWithResult) or read back when asked (a test batch, the
// bench loaders). A batch of 650,000 entities kept a line per entity in the
// worker to its end (its localId string, ids and three UUIDs as bytes).
import type pg from 'pg';
import type { PlannedRecord } from '../../domain/batch/index.ts';
import type { BatchRevisionResult } from '../../domain/model.ts';
import { encodeCopyLoad, type CopyLoad } from '../copy.ts';

/** The temporary table of the staged lines (dropped at the end of the transaction). */
const STAGED_LINES = 'apply_result_line';

const COLUMNS = ['seq', 'local_id', 'entity_id', 'entity_uuid', 'rev', 'metadata_rev'];

/** SQL creating the (empty) table; one left by an earlier apply of the same transaction is replaced. */
export const CREATE_LINE_STAGE = `drop table if exists ${STAGED_LINES};
  create temporary table ${STAGED_LINES} (
    seq integer not null, local_id text not null, entity_id bigint not null, entity_uuid text not null, rev text not null, metadata_rev text not null
  ) on commit drop`;

/** A group's revision lines as COPY rows, in the order given; `firstSeq` numbers them after the lines before. */
export function encodeResultLines(records: readonly PlannedRecord[], firstSeq: number): CopyLoad {
  return encodeCopyLoad(
    STAGED_LINES,
    COLUMNS,
    records.map((record, index) => [
      firstSeq + index,
      record.localId,
      record.after.entityId,
      record.after.entityUuid,
      record.after.revision.rev,
      record.after.revision.metadataRev,
    ]),
  );
}

/** The staged lines as the success document lists them, in the order they were staged. */
export async function readResultLines(client: pg.PoolClient): Promise<BatchRevisionResult[]> {
  const { rows } = await client.query<{ local_id: string; entity_id: string; entity_uuid: string; rev: string; metadata_rev: string }>(
    `select local_id, entity_id::text, entity_uuid, rev, metadata_rev from ${STAGED_LINES} order by seq`,
  );
  return rows.map((row) => ({
    localId: row.local_id,
    entityId: Number(row.entity_id),
    entityUuid: row.entity_uuid,
    rev: row.rev,
    metadataRev: row.metadata_rev,
  }));
}

/**
 * The success document (BatchSuccess) as jsonb, built in PostgreSQL from the
 * staged lines; `$3` is the transaction UUID. The same jsonb value as the
 * document's JSON text cast to jsonb.
 */
export const STAGED_SUCCESS_JSONB = `jsonb_build_object(
    'outcome', 'success',
    'transactionUuid', $3::text,
    'revisions', coalesce((select jsonb_agg(jsonb_build_object('localId', local_id, 'entityId', entity_id, 'entityUuid', entity_uuid, 'rev', rev, 'metadataRev', metadata_rev) order by seq) from ${STAGED_LINES}), '[]'::jsonb))`;
