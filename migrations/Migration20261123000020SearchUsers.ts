import { Migration } from '@mikro-orm/migrations';

// Search by a user's UUID or full name (v2 userUuid / userName) and by the
// role SENDER: participants and the sender live in the record's revision
// (entity.record->'revision'), and the compiler asks for them by JSON
// containment (@>), which a jsonb_path_ops GIN index over that one object
// answers without reading every record.
export class Migration20261123000020SearchUsers extends Migration {
  override name = 'Migration20261123000020SearchUsers';

  override up(): void {
    this.addSql(`create index entity_revision_users_idx on entity using gin ((record->'revision') jsonb_path_ops)`);
  }

  override down(): void {
    this.addSql('drop index if exists entity_revision_users_idx');
  }
}
