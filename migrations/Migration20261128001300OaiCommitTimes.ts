import { Migration } from '@mikro-orm/migrations';

// transaction_created_at_idx: the commits of an OAI-PMH from/until window
// are found by their commit time (db/oai.ts commitWindow): two probes of this
// index, never a walk of every commit or entity. One entry per commit.
export class Migration20261128001300OaiCommitTimes extends Migration {
  override name = 'Migration20261128001300OaiCommitTimes';

  override up(): void {
    this.addSql('create index transaction_created_at_idx on transaction (created_at, commit_seq) where commit_seq is not null');
  }

  override down(): void {
    this.addSql('drop index if exists transaction_created_at_idx');
  }
}
