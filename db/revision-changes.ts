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
 * over revision `r` joined to its entity `e`.
 */
export const OMITTED_CREATED_PARTS_SQL = `case when r.changes->'created' is not null and not (r.changes->'created' ? 'parts')
  then coalesce(r.snapshot, e.record)->'parts' end`;

export function fromStoredChanges(stored: StoredChanges, omittedParts: Part[] | null): PlannedChanges {
  if (stored.created === undefined || stored.created.parts !== undefined) return stored as PlannedChanges;
  return { ...stored, created: { entityType: stored.created.entityType, parts: omittedParts ?? [] } };
}
