import { Migration } from '@mikro-orm/migrations';

// Overlapping batches (docs/decisions/0013).
//
// 1. transaction.seq is taken when a batch begins writing; two batches that
//    overlap commit in either order, so a feed bounded by the highest visible
//    seq skipped a batch that committed after a later-numbered one. Each
//    transaction now also gets commit_seq, taken at its COMMIT by a deferred
//    constraint trigger under one transaction-scoped advisory lock: the lock
//    is held from the moment the number is drawn until the commit is visible,
//    so commit_seq orders transactions exactly as they become visible. Every
//    writer of a transaction row gets it, whatever code path commits. The
//    feed and the revisions exports select by commit_seq; seq stays the key
//    revisions refer to. The lock covers only the commit itself (drawing a
//    number, one row update, the commit record): unrelated batches wait for
//    each other's commit record, never for each other's work.
//
// 2. The name vocabulary is shared by every batch: a new word inserted inside
//    a batch's transaction made every other batch inserting it wait for that
//    commit (and two batches inserting words in opposite group order
//    deadlocked). Words are now added by the writer on a connection of its
//    own, committed at once (db/name-vocabulary.ts); a word no entity holds
//    yet matches nothing, so an early or orphaned word is harmless. The
//    trigger keeps only name_word, whose rows belong to the batch's entities.
//
// 3. write_claim makes a batch wait for another open batch only when both
//    create the same client-given entity UUID or write the same preferred
//    name: each inserts its keys (sorted) and deletes them again at once;
//    the unique index makes a second inserter of a key wait for the first
//    one's commit, and the rows take no room in the lock table (advisory
//    locks per key ran out of shared memory at 10,000 names). See
//    db/write-claims.ts.

export class Migration20261124000040CommitOrder extends Migration {
  override name = 'Migration20261124000040CommitOrder';

  override up(): void {
    this.addSql('alter table transaction add column commit_seq bigint');
    this.addSql('update transaction set commit_seq = seq');
    this.addSql('create unique index transaction_commit_seq_idx on transaction (commit_seq)');
    this.addSql('create sequence transaction_commit_seq');
    this.addSql(`select setval('transaction_commit_seq', greatest((select max(seq) from transaction), 1))`);
    this.addSql(`
      create function transaction_committing() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(1, 0);
        update transaction set commit_seq = nextval('transaction_commit_seq'), created_at = clock_timestamp() where seq = new.seq;
        return null;
      end $$`);
    this.addSql(`
      create constraint trigger transaction_commit_order after insert on transaction
        deferrable initially deferred for each row execute function transaction_committing()`);
    this.addSql('alter table transaction enable always trigger transaction_commit_order');

    this.addSql(`
      create or replace function name_words_added() returns trigger language plpgsql as $$
      begin
        insert into name_word (word, entity_id, preferred)
          select distinct w, a.entity_id, a.preferred from added a, name_words(a.value_norm) w where a.kind = 'name' order by 1, 2, 3
          on conflict do nothing;
        return null;
      end $$`);

    this.addSql(`create table write_claim (kind smallint not null, key text not null, primary key (kind, key))`);
  }

  override down(): void {
    this.addSql('drop table if exists write_claim');
    this.addSql(`
      create or replace function name_words_added() returns trigger language plpgsql as $$
      begin
        insert into name_vocabulary (word)
          select distinct w from added a, name_words(a.value_norm) w where a.kind = 'name' order by 1
          on conflict do nothing;
        insert into name_word (word, entity_id, preferred)
          select distinct w, a.entity_id, a.preferred from added a, name_words(a.value_norm) w where a.kind = 'name' order by 1, 2, 3
          on conflict do nothing;
        return null;
      end $$`);
    this.addSql('drop trigger if exists transaction_commit_order on transaction');
    this.addSql('drop function if exists transaction_committing()');
    this.addSql('drop sequence if exists transaction_commit_seq');
    this.addSql('drop index if exists transaction_commit_seq_idx');
    this.addSql('alter table transaction drop column if exists commit_seq');
  }
}
