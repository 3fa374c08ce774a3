import { Migration } from '@mikro-orm/migrations';

// Search by a user in a role (userRoles with userUuid / userName / user): the
// users of each record's current revision as narrow keyed rows. Before, the
// filter was a JSON containment test over entity_users(record->'revision')
// (Migration20261123000020SearchUsers) served by a jsonb_path_ops GIN index.
// That index is lossy (hashed paths): every candidate is rechecked by
// detoasting its whole record, a page sorts all matches, a total reads one
// entity row per match, and a planner that walks entity in id order for a
// page tests the function on every record the user does not hold. On
// 300,000 entities, a sender of 30,000 of them: 6.1 s a page, 2.3 s a total;
// that sender with a type none of its records has: 5.8 s for an empty page
// (on 1,200,000 entities an empty result took 4.3 s). Here a user alone in
// a role is paged from its entries of the primary key (in entity order
// there) and counted by an index-only scan of them: 0.2 ms a page, 26-65 ms
// the total of 30,000 (machine at load 10-14); with other filters the
// user's entity ids are one array that entity is read by, in id order.
//
// Rows (domain/search-values.ts searchUserRoles): the sender of the current
// content with role SENDER and each participant in its role, once per field
// that names the user, user_key 'uuid:<uuid>', 'name:<full name>' or
// 'id:<id>' (values as the record holds them), and '' for "some user in this
// role". The batch write path writes them beside entity_participant
// (services/batches/write-plan.ts: replaced for the records a batch changes,
// COPY for all), in the batch's transaction. Reading them back from the
// record in a trigger cost 0.1 ms a record (detoasting it): 1-3 s a batch of
// 10,000. No foreign key (a check per row on every write); TRUNCATE of
// entity (benchmarks) empties the table, its triggers ENABLE ALWAYS.
export class Migration20261124000090SearchUserRoles extends Migration {
  override name = 'Migration20261124000090SearchUserRoles';

  override up(): void {
    this.addSql(`
      create table search_user_role (
        user_key text not null,
        role text not null,
        entity_id bigint not null,
        primary key (user_key, role, entity_id)
      )`);
    this.addSql(`create index search_user_role_entity_idx on search_user_role (entity_id)`);
    this.addSql(`
      create function search_user_role_truncated() returns trigger language plpgsql as $$
      begin
        truncate search_user_role;
        return null;
      end $$`);
    this.addSql(
      `create trigger entity_search_user_role_truncated after truncate on entity for each statement execute function search_user_role_truncated()`,
    );
    this.addSql(`alter table entity enable always trigger entity_search_user_role_truncated`);

    // The records already stored, as searchUserRoles() derives them.
    this.addSql(`
      insert into search_user_role (user_key, role, entity_id)
        select distinct k.user_key, u->>'role', e.id
          from entity e
          cross join lateral jsonb_array_elements(entity_users(e.record->'revision')) u
          cross join lateral (values (''), ('uuid:' || (u->'user'->>'uuid')), ('name:' || (u->'user'->>'name')), ('id:' || (u->'user'->>'id'))) k (user_key)
         where jsonb_typeof(u->'user') = 'object' and u->>'role' is not null and k.user_key is not null`);
    this.addSql(`analyze search_user_role`);
    // Nothing reads the JSON index of entity_users() any more: one index less to write with every record.
    this.addSql('drop index if exists entity_users_idx');
  }

  override down(): void {
    this.addSql(`create index if not exists entity_users_idx on entity using gin (entity_users(record->'revision') jsonb_path_ops)`);
    this.addSql('drop trigger if exists entity_search_user_role_truncated on entity');
    this.addSql('drop function if exists search_user_role_truncated()');
    this.addSql('drop table if exists search_user_role');
  }
}
