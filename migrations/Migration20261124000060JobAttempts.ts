import { Migration } from '@mikro-orm/migrations';

// How many times Temporal started the job's activity (applyBatch, runExport):
// each attempt records its number as it starts, so the count survives the
// workflow (its history is gone after the retention) and counts attempts that
// failed too. Null for jobs whose activity has not started yet, and for jobs
// that ended before this column existed. Not the batch's `attempt`, which
// counts submissions of the same batch id.
export class Migration20261124000060JobAttempts extends Migration {
  override name = 'Migration20261124000060JobAttempts';

  override up(): void {
    this.addSql('alter table batch add column activity_attempts integer');
    this.addSql('alter table export_request add column activity_attempts integer');
  }

  override down(): void {
    this.addSql('alter table export_request drop column if exists activity_attempts');
    this.addSql('alter table batch drop column if exists activity_attempts');
  }
}
