import type { PlannedChanges } from '../domain/batch/index.ts';
import type { Part } from '../domain/model.ts';

// How revision.changes holds a change set. A revision that only creates its
// record (most of a large ingest) stores `created` without its parts: they
// are the parts of the record as of that revision, which is the revision's
// snapshot, or the entity's record while the revision is current. Stored
// twice they were about half of the bytes an ingest wrote.

/** revision.changes, as written. */
export type StoredChanges = Omit<PlannedChanges, 'created'> & { created?: { entityType: string; parts?: Part[] } };

export function toStoredChanges(changes: PlannedChanges): StoredChanges {
  if (changes.created === undefined || changes.changes.length > 0) return changes;
  return { ...changes, created: { entityType: changes.created.entityType } };
}

/**
 * SQL for the parts a stored change set left out (null when it left none out),
 * over revision `r`. Its entity is looked up by primary key for the rows that
 * need it, not joined: a join of every entity planned on no statistics reads
 * the whole table for an export of a few revisions.
 */
export const OMITTED_CREATED_PARTS_SQL = `case when r.changes->'created' is not null and not (r.changes->'created' ? 'parts')
  then coalesce(r.snapshot, (select e.record from entity e where e.id = r.entity_id))->'parts' end`;

export function fromStoredChanges(stored: StoredChanges, omittedParts: Part[] | null): PlannedChanges {
  if (stored.created === undefined || stored.created.parts !== undefined) return stored as PlannedChanges;
  return { ...stored, created: { entityType: stored.created.entityType, parts: omittedParts ?? [] } };
}
