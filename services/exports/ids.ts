import type { Queryable } from '../../db/sql.ts';

// The identifiers an export names: JSON numbers, or strings holding a number
// or a UUID, mixed. The API has checked each one; this turns them into the
// two arrays the SQL filters take, and finds those that name no record.

export type RequestedId = number | string;

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

/**
 * The requested identifiers that match no record, as the client wrote them
 * (as strings), each once, in request order.
 */
export async function findMissing(db: Queryable, requested: readonly RequestedId[]): Promise<string[]> {
  if (requested.length === 0) return [];
  const given = requested.map(String);
  const ids = requested.map((id) => (typeof id === 'number' || DIGITS.test(id) ? String(id) : null));
  const uuids = requested.map((id) => (typeof id === 'string' && !DIGITS.test(id) ? id.toLowerCase() : null));
  const { rows } = await db.query<{ given: string }>(
    `select r.given
       from unnest($1::text[], $2::bigint[], $3::uuid[]) with ordinality as r(given, id, uuid, n)
      where not exists (select 1 from entity e where e.id = r.id)
        and not exists (select 1 from entity e where e.uuid = r.uuid)
      group by r.given
      order by min(r.n)`,
    [given, ids, uuids],
  );
  return rows.map((row) => row.given);
}
