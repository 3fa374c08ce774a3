import type pg from 'pg';
import { streamRows } from '../../db/cursor.ts';
import type { PlannedChanges } from '../../domain/batch/index.ts';
import type { EntityRecord, EntityRef, RevisionChanges } from '../../domain/model.ts';

// The two export streams (snapshot and revisions), read through a cursor so
// memory stays flat whatever the number of records. The v1 API streams them
// straight into its response; a Temporal export can stream them into a file.

function splitRefs(refs: readonly EntityRef[]): { ids: string[]; uuids: string[] } {
  const ids: string[] = [];
  const uuids: string[] = [];
  for (const ref of refs) {
    if (ref.entityId !== undefined) ids.push(String(ref.entityId));
    if (ref.entityUuid !== undefined) uuids.push(ref.entityUuid.toLowerCase());
  }
  return { ids, uuids };
}

/**
 * The current form of the named records that exist (every record when `refs`
 * is empty), in entityId order, each once; refs that name nothing are skipped.
 */
export async function* streamCurrentRecords(pool: pg.Pool, refs: readonly EntityRef[], rowsPerRead?: number): AsyncGenerator<EntityRecord> {
  const { ids, uuids } = splitRefs(refs);
  const rows =
    refs.length === 0
      ? streamRows<{ record: EntityRecord }>(pool, 'select record from entity order by id', [], rowsPerRead)
      : streamRows<{ record: EntityRecord }>(
          pool,
          'select record from entity where id = any($1::bigint[]) or uuid = any($2::uuid[]) order by id',
          [ids, uuids],
          rowsPerRead,
        );
  for await (const row of rows) yield row.record;
}

interface RevisionRow {
  uuid: string;
  batch_id: string;
  changes: PlannedChanges;
}

/**
 * The change set of every revision written after the transaction `fromSeq`,
 * in transaction order (entityId order inside one transaction). An empty
 * `refs` means every entity, as in streamCurrentRecords.
 */
export async function* streamRevisionChanges(pool: pg.Pool, fromSeq: string, refs: readonly EntityRef[], rowsPerRead?: number): AsyncGenerator<RevisionChanges> {
  const { ids, uuids } = splitRefs(refs);
  const filter =
    refs.length === 0 ? '' : 'and r.entity_id in (select id from entity where id = any($2::bigint[]) or uuid = any($3::uuid[]))';
  const rows = streamRows<RevisionRow>(
    pool,
    `select r.uuid, r.batch_id, r.changes from revision r where r.seq > $1 ${filter} order by r.seq, r.entity_id, r.uuid`,
    refs.length === 0 ? [fromSeq] : [fromSeq, ids, uuids],
    rowsPerRead,
  );
  for await (const row of rows) {
    yield { ...row.changes, batchId: row.changes.batchId ?? row.batch_id, revisionUuid: row.uuid };
  }
}
