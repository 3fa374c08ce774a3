import { Migration } from '@mikro-orm/migrations';

// The API looks for batches still ACCEPTED long after they were stored (see
// services/batches/recovery.ts); the partial index holds only those few rows.
export class Migration20261123000004AcceptedBatches extends Migration {
  override name = 'Migration20261123000004AcceptedBatches';

  override up(): void {
    this.addSql(`create index batch_accepted_idx on batch (submitted_at) where status = 'ACCEPTED'`);
  }

  override down(): void {
    this.addSql('drop index if exists batch_accepted_idx');
  }
}
