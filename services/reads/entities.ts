import type pg from 'pg';
import type { EntityRecord, EntityRef } from '../../domain/model.ts';

/** The current form of a record, by number or UUID. */
export async function findCurrentRecord(pool: pg.Pool, ref: EntityRef): Promise<EntityRecord | undefined> {
  // Named, so each pooled connection parses and plans it once: the hottest read of the service.
  const { rows } = await pool.query<{ record: EntityRecord }>(
    ref.entityId !== undefined
      ? { name: 'current-record-by-id', text: 'select record from entity where id = $1', values: [ref.entityId] }
      : { name: 'current-record-by-uuid', text: 'select record from entity where uuid = $1', values: [ref.entityUuid] },
  );
  return rows[0]?.record;
}

/**
 * The record as it was in a revision of that entity, named by its rev or its
 * metadataRev. A rev shared by metadata-only revisions names the latest of
 * them. One indexed row, whatever the length of the history.
 */
export async function findRecordAtRevision(pool: pg.Pool, ref: EntityRef, revisionId: string): Promise<EntityRecord | undefined> {
  const entityFilter = ref.entityId !== undefined ? 'e.id = $1' : 'e.uuid = $1';
  const { rows } = await pool.query<{ snapshot: EntityRecord }>(
    `select coalesce(r.snapshot, e.record) as snapshot from revision r join entity e on e.id = r.entity_id
      where ${entityFilter} and (r.uuid = $2 or r.rev = $2)
      order by r.seq desc limit 1`,
    [ref.entityId ?? ref.entityUuid, revisionId],
  );
  return rows[0]?.snapshot;
}
