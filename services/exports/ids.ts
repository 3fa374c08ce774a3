import type { RequestedId } from '../../db/exports.ts';

// The identifiers an export names: JSON numbers, or strings holding a number
// or a UUID, mixed. The API has checked each one; this turns them into the
// two arrays the SQL filters take (deps.db.exports.findMissing finds those
// that name no record).

export type { RequestedId };

const DIGITS = /^[0-9]+$/;

export interface IdFilter {
  /** Entity numbers, as decimal text so that no digit is lost on the way to bigint. */
  entityIds: string[];
  entityUuids: string[];
}

export function idFilter(requested: readonly RequestedId[]): IdFilter {
  const filter: IdFilter = { entityIds: [], entityUuids: [] };
  for (const id of requested) {
    if (typeof id === 'number') filter.entityIds.push(String(id));
    else if (DIGITS.test(id)) filter.entityIds.push(id);
    else filter.entityUuids.push(id.toLowerCase());
  }
  return filter;
}
