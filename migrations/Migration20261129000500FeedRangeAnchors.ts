import { Migration } from '@mikro-orm/migrations';

// A kept range's anchors, one row each (db/feed-ranges.ts). In arrays on
// feed_range every page read them all: one anchor per 1,000 records, so a
// page of a walk from genesis cost more as the registry grew (3,000 anchors
// at 3,000,000 records, about 4 ms of a 6 ms page). By their key a page
// reads the two anchors around it. Kept layouts are a cache: they are
// dropped here and made again by the next page that needs one.
export class Migration20261129000500FeedRangeAnchors extends Migration {
  override name = 'Migration20261129000500FeedRangeAnchors';

  override up(): void {
    this.addSql('delete from feed_range');
    this.addSql(`
      create table feed_range_anchor (
        from_commit_seq bigint not null,
        to_commit_seq bigint not null,
        -- 1-based position in the range's records by entity id; the last record's is the range's count.
        position bigint not null,
        entity_id bigint not null,
        primary key (from_commit_seq, to_commit_seq, position),
        foreign key (from_commit_seq, to_commit_seq) references feed_range on delete cascade
      )`);
    this.addSql('alter table feed_range drop column anchor_ids, drop column anchor_positions');
  }

  override down(): void {
    this.addSql('drop table feed_range_anchor');
    this.addSql('delete from feed_range');
    this.addSql(`alter table feed_range add column anchor_ids bigint[] not null, add column anchor_positions bigint[] not null`);
  }
}
