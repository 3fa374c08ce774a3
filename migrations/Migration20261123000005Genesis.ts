import { Migration } from '@mikro-orm/migrations';

/**
 * The real registry's clients start their sync at the beginning of history,
 * a fixed transaction id (GET /updates/from/91812cb8-…). It is a real row,
 * the first (seq 0, before every batch's), so every feed and export that
 * takes a transaction takes it on any database, empty or not.
 */
export const GENESIS_TRANSACTION_ID = '91812cb8-3519-4f78-b0ec-df6e951e2c7c';

export class Migration20261123000005Genesis extends Migration {
  override name = 'Migration20261123000005Genesis';

  override up(): void {
    this.addSql('alter table transaction alter column batch_id drop not null');
    this.addSql(
      `insert into transaction (seq, uuid, batch_id, created_at) values (0, '${GENESIS_TRANSACTION_ID}', null, '1970-01-01T00:00:00Z')
       on conflict do nothing`,
    );
  }

  override down(): void {
    this.addSql(`delete from transaction where uuid = '${GENESIS_TRANSACTION_ID}'`);
    this.addSql('alter table transaction alter column batch_id set not null');
  }
}
