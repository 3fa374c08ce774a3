import { Migration } from '@mikro-orm/migrations';

// The finished batches and exports /metrics reports, kept beside their rows
// by their own writes (as entity_count is, Migration20261127000200EntityCounts),
// so that a scrape sums a few rows instead of aggregating both tables in
// every API process.
//
// A row's contribution: a batch COMPLETED counts one completed and its
// changes; FAILED one failed; every earlier submission of the same id
// (attempt - 1) one failed more. An export COMPLETED or EXPIRED counts one
// completed and its bytes; FAILED one failed. Statement triggers insert the
// statement's delta (new rows' contributions minus old rows'), only when it
// is not zero, and fold the rows once there are more than COMPACT_AFTER, in
// the writer's transaction (SKIP LOCKED: two folders never wait on each other).
//
// The oldest unfinished batch is read through a partial index of the
// unfinished ones: the first entry, not a pass over the table.
const COMPACT_AFTER = 256;

const CONTRIBUTION = {
  batch: `select (status = 'COMPLETED')::int as completed, (status = 'FAILED')::int + attempt - 1 as failed,
                 case when status = 'COMPLETED' then coalesce(changes_total, 0) else 0 end as amount`,
  export: `select (status in ('COMPLETED', 'EXPIRED'))::int as completed, (status = 'FAILED')::int as failed,
                  case when status in ('COMPLETED', 'EXPIRED') then bytes else 0 end as amount`,
} as const;
const TABLES = { batch: 'batch', export: 'export_request' } as const;
type Kind = keyof typeof TABLES;

export class Migration20261127000600JobOutcomeCounts extends Migration {
  override name = 'Migration20261127000600JobOutcomeCounts';

  override up(): void {
    this.addSql(
      `create table job_outcome_count (kind text not null, completed bigint not null, failed bigint not null, amount bigint not null)`,
    );
    this.addSql(`
      create function job_outcome_count_compact() returns void language plpgsql as $$
      begin
        if (select count(*) from job_outcome_count) > ${COMPACT_AFTER} then
          with folded as (
            delete from job_outcome_count where ctid = any(array(select ctid from job_outcome_count for update skip locked))
            returning kind, completed, failed, amount)
          insert into job_outcome_count (kind, completed, failed, amount)
            select kind, sum(completed), sum(failed), sum(amount) from folded group by kind;
        end if;
      end $$`);
    for (const kind of Object.keys(TABLES) as Kind[]) {
      const table = TABLES[kind];
      const delta = (from: string, sign: string) =>
        `select completed * ${sign} as completed, failed * ${sign} as failed, amount * ${sign} as amount from (${CONTRIBUTION[kind]} from ${from}) c`;
      const counting = (name: string, rows: string) => `
        create function job_outcome_count_${kind}_${name}() returns trigger language plpgsql as $$
        begin
          insert into job_outcome_count (kind, completed, failed, amount)
            select '${kind}', sum(completed), sum(failed), sum(amount) from (${rows}) d
            having sum(completed) <> 0 or sum(failed) <> 0 or sum(amount) <> 0;
          perform job_outcome_count_compact();
          return null;
        end $$`;
      this.addSql(counting('inserted', delta('inserted_rows', '1')));
      this.addSql(counting('updated', `${delta('new_rows', '1')} union all ${delta('old_rows', '-1')}`));
      this.addSql(counting('deleted', delta('deleted_rows', '-1')));
      this.addSql(`
        create function job_outcome_count_${kind}_truncated() returns trigger language plpgsql as $$
        begin
          delete from job_outcome_count where kind = '${kind}';
          return null;
        end $$`);
      this.addSql(
        `create trigger job_outcome_count_inserted after insert on ${table} referencing new table as inserted_rows for each statement execute function job_outcome_count_${kind}_inserted()`,
      );
      this.addSql(
        `create trigger job_outcome_count_updated after update on ${table} referencing old table as old_rows new table as new_rows for each statement execute function job_outcome_count_${kind}_updated()`,
      );
      this.addSql(
        `create trigger job_outcome_count_deleted after delete on ${table} referencing old table as deleted_rows for each statement execute function job_outcome_count_${kind}_deleted()`,
      );
      this.addSql(
        `create trigger job_outcome_count_truncated after truncate on ${table} for each statement execute function job_outcome_count_${kind}_truncated()`,
      );
      for (const trigger of ['inserted', 'updated', 'deleted', 'truncated'])
        this.addSql(`alter table ${table} enable always trigger job_outcome_count_${trigger}`);
      // The jobs already stored.
      this.addSql(
        `insert into job_outcome_count (kind, completed, failed, amount) select '${kind}', coalesce(sum(completed), 0), coalesce(sum(failed), 0), coalesce(sum(amount), 0) from (${CONTRIBUTION[kind]} from ${table}) c`,
      );
    }
    this.addSql(`create index batch_unfinished_idx on batch (submitted_at) where status in ('ACCEPTED', 'PROCESSING')`);
  }

  override down(): void {
    this.addSql('drop index if exists batch_unfinished_idx');
    for (const kind of Object.keys(TABLES) as Kind[]) {
      for (const trigger of ['inserted', 'updated', 'deleted', 'truncated']) {
        this.addSql(`drop trigger if exists job_outcome_count_${trigger} on ${TABLES[kind]}`);
        this.addSql(`drop function if exists job_outcome_count_${kind}_${trigger}()`);
      }
    }
    this.addSql('drop function if exists job_outcome_count_compact()');
    this.addSql('drop table if exists job_outcome_count');
  }
}
