import { Migration } from '@mikro-orm/migrations';

// How many entities each type has in each state, kept beside entity by its
// own writes, so that the exact total of a search by types and states alone
// is a sum of a few rows instead of a count of every matching entity (a
// quarter of 1,000,000 entities: 35 ms of an index-only scan on the bench
// machine, most of the search's time; docs/decisions/0069).
//
// Rows are deltas, only ever inserted by the writing transaction: +n for
// the rows a statement inserted, -n/+n for an update that moved rows between
// types or states, -n for deletes. A total is the sum of the rows the
// reader's snapshot sees, so it is exact in that snapshot (the page and the
// total of a search agree) and two batches never touch the same row: no
// batch waits on another for it. Statement triggers with transition tables
// see every writer (the grouped COPYs, updates, hand-made fixes), enabled
// ALWAYS as the other entity triggers (loaders run as replicas).
//
// The deltas are folded into one row per type and state once a statement
// finds more than COMPACT_AFTER rows: the rows it can lock without waiting
// (SKIP LOCKED; another folding transaction keeps its own) are deleted and
// their sums inserted, in the writer's transaction, so a rollback undoes
// both. Under READ COMMITTED (every writer's level) a row another
// transaction folded meanwhile is skipped, never counted twice.
const COMPACT_AFTER = 256;

export class Migration20261127000200EntityCounts extends Migration {
  override name = 'Migration20261127000200EntityCounts';

  override up(): void {
    this.addSql(`create table entity_count (entity_type text not null, state text not null, entities bigint not null)`);
    this.addSql(`
      create function entity_count_compact() returns void language plpgsql as $$
      begin
        if (select count(*) from entity_count) > ${COMPACT_AFTER} then
          with folded as (
            delete from entity_count where ctid = any(array(select ctid from entity_count for update skip locked))
            returning entity_type, state, entities)
          insert into entity_count (entity_type, state, entities)
            select entity_type, state, sum(entities) from folded group by entity_type, state having sum(entities) <> 0;
        end if;
      end $$`);
    // Each adds the statement's deltas, then folds the rows if there are many.
    const counting = (name: string, deltas: string) => `
      create function entity_count_${name}() returns trigger language plpgsql as $$
      begin
        insert into entity_count (entity_type, state, entities) ${deltas};
        perform entity_count_compact();
        return null;
      end $$`;
    this.addSql(counting('inserted', 'select entity_type, state, count(*) from inserted_rows group by entity_type, state'));
    this.addSql(
      counting(
        'updated',
        `select entity_type, state, sum(entities) from (
           select entity_type, state, -1 as entities from old_rows
           union all
           select entity_type, state, 1 from new_rows) moved
          group by entity_type, state having sum(entities) <> 0`,
      ),
    );
    this.addSql(counting('deleted', 'select entity_type, state, -count(*) from deleted_rows group by entity_type, state'));
    this.addSql(`
      create function entity_count_truncated() returns trigger language plpgsql as $$
      begin
        truncate entity_count;
        return null;
      end $$`);
    this.addSql(
      `create trigger entity_count_inserted after insert on entity referencing new table as inserted_rows for each statement execute function entity_count_inserted()`,
    );
    this.addSql(
      `create trigger entity_count_updated after update on entity referencing old table as old_rows new table as new_rows for each statement execute function entity_count_updated()`,
    );
    this.addSql(
      `create trigger entity_count_deleted after delete on entity referencing old table as deleted_rows for each statement execute function entity_count_deleted()`,
    );
    this.addSql(
      `create trigger entity_count_truncated after truncate on entity for each statement execute function entity_count_truncated()`,
    );
    for (const trigger of ['inserted', 'updated', 'deleted', 'truncated'])
      this.addSql(`alter table entity enable always trigger entity_count_${trigger}`);
    // The entities already stored.
    this.addSql(
      `insert into entity_count (entity_type, state, entities) select entity_type, state, count(*) from entity group by entity_type, state`,
    );
  }

  override down(): void {
    for (const trigger of ['inserted', 'updated', 'deleted', 'truncated'])
      this.addSql(`drop trigger if exists entity_count_${trigger} on entity`);
    for (const name of ['inserted', 'updated', 'deleted', 'truncated', 'compact'])
      this.addSql(`drop function if exists entity_count_${name}()`);
    this.addSql('drop table if exists entity_count');
  }
}
