import { Migration } from '@mikro-orm/migrations';

// Where each page of a closed range of the change feed starts (db/feed-ranges.ts,
// docs/decisions: "Feed pages at the cost of the page"). A range (from, to] of
// committed transactions never changes, so its sorted list of changed records
// never does either: one pass over it records an anchor (the entity id) at
// every ANCHOR_EVERY-th record, and any page of any size then starts from the
// anchor before it instead of sorting the whole range again. Rows are kept
// for FEED_RANGE_RETENTION_DAYS; a page whose range has no row (a cold page)
// costs one pass and writes it.

export class Migration20261127000300FeedRanges extends Migration {
  override name = 'Migration20261127000300FeedRanges';

  override up(): void {
    this.addSql(`
      create table feed_range (
        from_commit_seq bigint not null,
        to_commit_seq bigint not null,
        -- Records changed in the range, each counted once: the feed's cnt.
        records bigint not null,
        -- Revisions in the range: what a page read from the transactions' side costs.
        revisions bigint not null,
        -- The range's transactions' seqs lie in [min_seq, max_seq]; gap_seqs are
        -- the seqs in there that are not the range's (committed outside it, in
        -- flight or rolled back when the row was written), or null when too many to list.
        min_seq bigint,
        max_seq bigint,
        gap_seqs bigint[],
        -- The entity id of the record at each position (1-based, ascending).
        anchor_ids bigint[] not null,
        anchor_positions bigint[] not null,
        created_at timestamptz not null default now(),
        primary key (from_commit_seq, to_commit_seq)
      )`);
    this.addSql('create index feed_range_created_at_idx on feed_range (created_at)');
  }

  override down(): void {
    this.addSql('drop table if exists feed_range');
  }
}
