import type pg from 'pg';
import { streamPages } from './cursor.ts';
import { splitRefs } from './entity-refs.ts';
import { fromStoredChanges, OMITTED_CREATED_PARTS_SQL, type StoredChanges } from './revision-changes.ts';
import type { EntityRecord, EntityRef, Part, RevisionChanges } from '../domain/model.ts';

// The two reads behind every export (snapshot and revisions), through a
// server-side cursor a page (one cursor read) at a time, so memory stays flat
// whatever the number of records.

export interface ExportRecords {
  /**
   * The current form of the named records that exist (every record when
   * `refs` is empty), in entityId order, each once; refs that name nothing
   * are skipped.
   */
  currentRecordPages(refs: readonly EntityRef[], rowsPerRead?: number): AsyncGenerator<EntityRecord[]>;
  /**
   * currentRecordPages with each record as its stored JSON text, for a
   * reader that parses a record only when it uses it: pages waiting to be
   * written are then a few strings, not thousands of small objects that
   * outlive a young-generation collection.
   */
  currentRecordTextPages(refs: readonly EntityRef[], rowsPerRead?: number): AsyncGenerator<string[]>;
  /**
   * The change set of every revision of the transactions committed after the
   * one whose commit_seq is `fromCommitSeq`, in commit order (entityId order
   * inside one transaction). An empty `refs` means every entity.
   */
  revisionChangePages(fromCommitSeq: string, refs: readonly EntityRef[], rowsPerRead?: number): AsyncGenerator<RevisionChanges[]>;
}

interface RevisionRow {
  uuid: string;
  batch_id: string;
  changes: StoredChanges;
  omitted_parts: Part[] | null;
}

export function exportRecordsOver(pool: pg.Pool): ExportRecords {
  async function* currentRecords(refs: readonly EntityRef[], rowsPerRead?: number): AsyncGenerator<string[]> {
    const { ids, uuids } = splitRefs(refs);
    const pages =
      refs.length === 0
        ? streamPages<{ record: string }>(pool, 'select record::text as record from entity order by id', [], rowsPerRead)
        : streamPages<{ record: string }>(
            pool,
            'select record::text as record from entity where id = any($1::bigint[]) or uuid = any($2::uuid[]) order by id',
            [ids, uuids],
            rowsPerRead,
          );
    for await (const rows of pages) yield rows.map((row) => row.record);
  }

  return {
    async *currentRecordPages(refs, rowsPerRead) {
      for await (const texts of currentRecords(refs, rowsPerRead)) yield texts.map((text) => JSON.parse(text) as EntityRecord);
    },

    currentRecordTextPages: (refs, rowsPerRead) => currentRecords(refs, rowsPerRead),

    async *revisionChangePages(fromCommitSeq, refs, rowsPerRead) {
      const { ids, uuids } = splitRefs(refs);
      const filter = refs.length === 0 ? '' : 'and (e.id = any($2::bigint[]) or e.uuid = any($3::uuid[]))';
      const pages = streamPages<RevisionRow>(
        pool,
        `select r.uuid, r.batch_id, r.changes, ${OMITTED_CREATED_PARTS_SQL} as omitted_parts
           from transaction t join revision r on r.seq = t.seq join entity e on e.id = r.entity_id
          where t.commit_seq > $1 ${filter} order by t.commit_seq, r.entity_id, r.uuid`,
        refs.length === 0 ? [fromCommitSeq] : [fromCommitSeq, ids, uuids],
        rowsPerRead,
      );
      for await (const rows of pages) {
        yield rows.map((row) => {
          const changes = fromStoredChanges(row.changes, row.omitted_parts);
          return { ...changes, batchId: changes.batchId ?? row.batch_id, revisionUuid: row.uuid };
        });
      }
    },
  };
}
