import { Migration } from '@mikro-orm/migrations';

// The last committed transaction an export's database snapshot includes, read
// in that same snapshot: a consumer who loads the file follows the feed from
// /updates/from/{up_to_trans_id} and misses nothing, repeats nothing.
export class Migration20261127000400ExportUpTo extends Migration {
  override name = 'Migration20261127000400ExportUpTo';

  override up(): void {
    this.addSql('alter table export_request add column up_to_trans_id uuid');
  }

  override down(): void {
    this.addSql('alter table export_request drop column if exists up_to_trans_id');
  }
}
