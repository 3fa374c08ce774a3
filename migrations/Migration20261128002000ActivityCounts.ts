import { Migration } from '@mikro-orm/migrations';

// transaction.revisions_through: how many revisions every transaction up to
// and including this one, in commit order, holds: the Activity Streams
// collection's totalItems as of that commit (one activity per revision,
// docs/decisions/0207), read by every API process from the newest commit's
// row at the cost of one index probe.
//
// It is set where commit_seq is drawn (the deferred commit trigger of
// Migration20261124000040CommitOrder, whose SQL is stated here in full):
// the transaction's own revisions are counted before the commit-order lock
// is taken (so the lock still covers only the commit itself), then the
// previous commit's total, visible once the lock is held (a commit keeps the
// lock until it is visible), is added under it. Every writer of a
// transaction row gets it, as it gets commit_seq. A commit that was already
// inside the former trigger while this migration ran leaves it null: the
// total is taken from the newest commit that has one, plus the revisions of
// the commits after it (none, but for such a commit), here and in
// db/activity-stream.ts alike.
/** Revisions of every visible commit: the newest known total and the revisions committed after it. */
const REVISIONS_COMMITTED = `select k.revisions_through + (select count(*) from transaction g join revision r on r.seq = g.seq
                                                        where g.commit_seq > k.commit_seq)
    from transaction k where k.revisions_through is not null order by k.commit_seq desc limit 1`;

export class Migration20261128002000ActivityCounts extends Migration {
  override name = 'Migration20261128002000ActivityCounts';

  override up(): void {
    this.addSql('alter table transaction add column revisions_through bigint');
    this.addSql(`
      update transaction t set revisions_through = c.through
        from (select x.seq, sum(coalesce(n.revisions, 0)) over (order by x.commit_seq) as through
                from transaction x
                left join (select seq, count(*) as revisions from revision group by seq) n on n.seq = x.seq
               where x.commit_seq is not null) c
       where c.seq = t.seq`);
    this.addSql(`
      create or replace function transaction_committing() returns trigger language plpgsql as $$
      declare
        own bigint;
      begin
        select count(*) into own from revision where seq = new.seq;
        perform pg_advisory_xact_lock(1, 0);
        update transaction set commit_seq = nextval('transaction_commit_seq'), created_at = clock_timestamp(),
               revisions_through = own + coalesce((${REVISIONS_COMMITTED}), 0)
         where seq = new.seq;
        return null;
      end $$`);
  }

  override down(): void {
    this.addSql(`
      create or replace function transaction_committing() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(1, 0);
        update transaction set commit_seq = nextval('transaction_commit_seq'), created_at = clock_timestamp() where seq = new.seq;
        return null;
      end $$`);
    this.addSql('alter table transaction drop column if exists revisions_through');
  }
}
