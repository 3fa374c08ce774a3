import { Migration } from '@mikro-orm/migrations';

// What every API process must agree on: held here, not in one
// process's memory, so N processes behave as one.
//
//  - replay_guard: one row per signed export start (HMAC key, signature, and
//    SHA-256 of the body), holding the export id it answered, until the
//    signature's date leaves the accepted window. A replay of the same request
//    gets that answer back instead of starting a second export
//    (db/replay-guard.ts). A handful of rows per key and window; expired ones
//    are swept a few at a time by the next claim.
//  - submission_rate: the submission rate limit's counter, one row per
//    principal, reused in place: a new window overwrites the old one
//    (db/submission-rate.ts).
export class Migration20261124000050SharedGuards extends Migration {
  override name = 'Migration20261124000050SharedGuards';

  override up(): void {
    this.addSql(`
      create table replay_guard (
        key_id text not null,
        signature text not null,
        body_sha256 bytea not null,
        expires_at timestamptz not null,
        answer text not null,
        created_at timestamptz not null default now(),
        primary key (key_id, signature, body_sha256)
      )`);
    this.addSql(`create index replay_guard_expires_idx on replay_guard (expires_at)`);
    this.addSql(`
      create table submission_rate (
        principal text primary key,
        window_started_at timestamptz not null,
        count integer not null
      )`);
  }

  override down(): void {
    this.addSql('drop table if exists replay_guard, submission_rate');
  }
}
