// The facts of the end-of-batch rule (domain/batch/pipeline.ts, `end`),
// staged in PostgreSQL: each group's entries go by COPY into a temporary
// table of the transaction, and at the end their keys are claimed and their
// stored holders found from there; only the entries that may be judged come
// back, so the worker keeps no entry per entity to the end of a large batch.
// Which states hold a key is the rule's (NAME_HOLDER_STATES), not this file's.
import type pg from 'pg';
import { NAME_HOLDER_STATES, type NameEntry } from '../../domain/batch/index.ts';
import { ENTITY_STATES, type EntityState, type PartRef } from '../../domain/model.ts';
import { encodeCopyLoad, type CopyLoad } from '../copy.ts';

/** The temporary table of the staged entries (dropped at the end of the apply, and at the end of the transaction at the latest). */
export const STAGED_NAMES = 'apply_name_entry';

const COLUMNS = ['seq', 'key', 'local_id', 'entity_id', 'is_new', 'checked', 'display_name', 'part_type', 'part_uuid'];

/** SQL creating the (empty) staging table; one left by an earlier apply of the same transaction is replaced. */
export const CREATE_NAME_STAGE = `drop table if exists ${STAGED_NAMES};
  create temporary table ${STAGED_NAMES} (
    seq integer not null, key text not null, local_id text not null, entity_id bigint not null,
    is_new boolean not null, checked boolean not null, display_name text not null, part_type text, part_uuid text
  ) on commit drop`;

/**
 * The holder states as SQL constants, not a parameter: PostgreSQL proves a
 * partial index (entity_type_name_idx) applies only from constants, and
 * `state = any($n)` would lose it. Each is checked to be a state of the
 * model, so nothing but those names reaches the text.
 */
function stateListSql(states: readonly EntityState[]): string {
  if (states.length === 0) throw new Error('an empty list of holder states');
  for (const state of states) {
    if (!ENTITY_STATES.includes(state) || !/^[A-Z_]+$/.test(state)) throw new Error(`not an entity state: ${String(state)}`);
  }
  return states.map((state) => `'${state}'`).join(', ');
}

/**
 * The entries whose key another entry of the batch (of another entity) or a
 * stored holder holds, with those holders: every entry of a key shared
 * within the batch, and the checked entries of a key held in the database.
 * Holders are looked up for the checked entries only: entities holding the
 * key now, as this transaction sees them, except the rows the batch wrote
 * itself ($1, the seq of its transaction row: their planned form decides,
 * and a large batch's own names are hundreds of thousands of rows the check
 * would only drop). One index probe per checked entry.
 */
export const KEY_HOLDERS_SQL = `with shared as (select key from ${STAGED_NAMES} group by key having min(entity_id) <> max(entity_id))
     select n.key, n.local_id, n.entity_id::text, n.is_new, n.checked, n.display_name, n.part_type, n.part_uuid, h.ids
       from ${STAGED_NAMES} n
       left join lateral (
         select array_agg(e.id)::text[] as ids
           from entity e
          where n.checked
            and e.entity_type = split_part(n.key, chr(1), 1) and e.preferred_name_norm = substr(n.key, strpos(n.key, chr(1)) + 1)
            and e.state in (${stateListSql(NAME_HOLDER_STATES)}) and e.last_seq is distinct from $1::bigint) h on true
      where h.ids is not null or n.key in (select key from shared)
      order by n.seq`;

/** A group's entries as COPY rows; `firstSeq` numbers them in the order they were added. */
export function encodeStagedEntries(entries: readonly NameEntry[], firstSeq: number): CopyLoad {
  return encodeCopyLoad(
    STAGED_NAMES,
    COLUMNS,
    entries.map((entry, index) => [
      firstSeq + index,
      entry.key,
      entry.localId,
      entry.entityId,
      entry.isNew,
      entry.checked,
      entry.displayName,
      entry.partType ?? null,
      entry.partUuid ?? null,
    ]),
  );
}

/** What the end of the apply reads back: the entries the rule may judge, in the order added, and the stored holders of their checked keys. */
export interface KeyHolders {
  entries: NameEntry[];
  holders: Map<string, number[]>;
}

/** The staged entries the rule may judge, and the stored holders of their checked keys (KEY_HOLDERS_SQL). */
export async function findKeyHolders(client: pg.PoolClient, writtenAs: string | undefined): Promise<KeyHolders> {
  // A query this size over a table without statistics is costed high enough for JIT compilation: time for nothing.
  await client.query('set local jit = off');
  const { rows } = await client.query<ConflictRow>(KEY_HOLDERS_SQL, [writtenAs ?? null]);
  await client.query('set local jit to default');
  const holders = new Map<string, number[]>();
  const entries = rows.map((row): NameEntry => {
    if (row.ids !== null && !holders.has(row.key)) holders.set(row.key, row.ids.map(Number));
    const entry: NameEntry = {
      key: row.key,
      localId: row.local_id,
      entityId: Number(row.entity_id),
      isNew: row.is_new,
      displayName: row.display_name,
      checked: row.checked,
    };
    if (row.part_type !== null) entry.partType = row.part_type as PartRef['type'];
    if (row.part_uuid !== null) entry.partUuid = row.part_uuid;
    return entry;
  });
  return { entries, holders };
}

type ConflictRow = {
  key: string;
  local_id: string;
  entity_id: string;
  is_new: boolean;
  checked: boolean;
  display_name: string;
  part_type: string | null;
  part_uuid: string | null;
  ids: string[] | null;
};

export async function dropNameStage(client: pg.PoolClient): Promise<void> {
  await client.query(`drop table if exists ${STAGED_NAMES}`);
}
