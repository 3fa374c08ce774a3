import { Migration } from '@mikro-orm/migrations';

// Search by a user's UUID or full name (v2 userUuid / userName) and by the
// role SENDER. The users of a record live in its revision: the participants
// (entity.record->'revision'->'participants') and the sender of the current
// content (->'user'). entity_users() lists them as one array, the sender as
// one more element with role SENDER, so that one JSON containment test
// (@>) asks for a user in a role, or in any role, and one jsonb_path_ops GIN
// index answers it. Only these few values are indexed: an index over the
// whole revision object would also hash its unique rev, metadataRev and
// createdAt values, which measured about twice as slow to insert.
export class Migration20261123000020SearchUsers extends Migration {
  override name = 'Migration20261123000020SearchUsers';

  override up(): void {
    this.addSql(`
      create function entity_users(revision jsonb) returns jsonb language sql immutable parallel safe
      as $$
        select '[]'::jsonb
          || jsonb_set('{"role": "SENDER"}'::jsonb, '{user}', coalesce(revision->'user', 'null'::jsonb))
          || coalesce(revision->'participants', '[]'::jsonb)
      $$`);
    this.addSql(`create index entity_users_idx on entity using gin (entity_users(record->'revision') jsonb_path_ops)`);
  }

  override down(): void {
    this.addSql('drop index if exists entity_users_idx');
    this.addSql('drop function if exists entity_users(jsonb)');
  }
}
