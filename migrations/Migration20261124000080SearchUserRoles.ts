import { Migration } from '@mikro-orm/migrations';

// Search by a user in a role (userRoles with userUuid / userName / user):
// the users of each record's current revision, one narrow row each, under
// btree indexes. Before, the filter was a JSON containment test over
// entity_users(record->'revision') (Migration20261123000020SearchUsers),
// served by a jsonb_path_ops GIN index. That index is lossy (hashed paths):
// every candidate row is rechecked by detoasting its whole record, a page
// sorts all matches, and a total reads one entity heap row per match, so a
// sender of 100,000 records cost seconds, and a planner that walks entity in
// id order for a page checks the function on every record when the user has
// none (an empty result: 4.3 s on 1,200,000 entities). Here a page walks the
// user's (role, entity_id) entries in entity order and stops after pageSize;
// a total is an index-only scan of the user's entries.
//
// Rows: the users of entity.record->'revision' as entity_users() lists them
// (the sender of the current content with role SENDER, each participant in
// its role), one row per field that names the user: user_key 'uuid:<uuid>',
// 'name:<full name>', 'id:<id>' (values as stored in the record), and ''
// for "some user in this role". The primary key (user_key, role, entity_id)
// is unique, so a filter on it is an inner join in entity order that stops
// after a page. A filter naming a user by two fields asks for one user with
// both: the compiler adds the record's own test as a recheck of the few
// candidates.
//
// Kept by a statement trigger on revision: every write of entity.record comes
// with a revision row of that entity in the same transaction, after the
// entity row (services/batches/write-plan.ts), so the trigger rebuilds the
// rows of the entities of the revisions just added from their current record.
// ENABLE ALWAYS, so loaders with session_replication_role = replica keep it;
// TRUNCATE of revision empties it, as it does search_user.
export class Migration20261124000080SearchUserRoles extends Migration {
  override name = 'Migration20261124000080SearchUserRoles';

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
      create function search_user_role_rows(entity_ids bigint[])
        returns table (user_key text, role text, entity_id bigint)
        language sql stable parallel safe
      as $$
        select distinct k.user_key, u->>'role', e.id
          from entity e
          cross join lateral jsonb_array_elements(entity_users(e.record->'revision')) u
          cross join lateral (values (''), ('uuid:' || (u->'user'->>'uuid')), ('name:' || (u->'user'->>'name')), ('id:' || (u->'user'->>'id'))) k (user_key)
         where (entity_ids is null or e.id = any(entity_ids))
           and jsonb_typeof(u->'user') = 'object' and u->>'role' is not null and k.user_key is not null
      $$`);
    // Sorted inserts: two transactions adding the same keys take their locks in one order (no deadlock).
    this.addSql(`
      create function search_user_role_revisions_added() returns trigger language plpgsql as $$
      declare
        ids bigint[];
      begin
        select array_agg(distinct a.entity_id) into ids from added a;
        if ids is null then return null; end if;
        delete from search_user_role where entity_id = any(ids);
        insert into search_user_role (user_key, role, entity_id)
          select * from search_user_role_rows(ids) order by 1, 2, 3;
        return null;
      end $$`);
    this.addSql(`
      create function search_user_role_truncated() returns trigger language plpgsql as $$
      begin
        truncate search_user_role;
        return null;
      end $$`);
    this.addSql(`create trigger revision_search_user_role_added after insert on revision referencing new table as added for each statement execute function search_user_role_revisions_added()`);
    this.addSql(`create trigger revision_search_user_role_truncated after truncate on revision for each statement execute function search_user_role_truncated()`);
    this.addSql(`alter table revision enable always trigger revision_search_user_role_added`);
    this.addSql(`alter table revision enable always trigger revision_search_user_role_truncated`);

    // The records already stored.
    this.addSql(`insert into search_user_role (user_key, role, entity_id) select * from search_user_role_rows(null)`);
    this.addSql(`analyze search_user_role`);
  }

  override down(): void {
    this.addSql('drop trigger if exists revision_search_user_role_added on revision');
    this.addSql('drop trigger if exists revision_search_user_role_truncated on revision');
    this.addSql('drop function if exists search_user_role_revisions_added(), search_user_role_truncated(), search_user_role_rows(bigint[])');
    this.addSql('drop table if exists search_user_role');
  }
}
