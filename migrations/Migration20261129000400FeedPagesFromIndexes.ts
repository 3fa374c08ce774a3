import { Migration } from '@mikro-orm/migrations';

// A page of the change feed (db/feed-ranges.ts pageQuery) reads, for each
// record of a range of ids, its latest revision's rev and metadata_rev and
// the record's UUID. From these indexes alone (index-only scans) a walk
// reads about 100 bytes a record, not a heap page of revision and one of
// entity (at 3,000,000 records those tables hold 18 GB and more than the
// machine's memory, so the first walk read them from disk).
//  - entity_filters_idx: the UUID beside the type and state;
//  - revision_entity_idx: rev and metadata_rev beside (entity_id, seq).
export class Migration20261129000400FeedPagesFromIndexes extends Migration {
  override name = 'Migration20261129000400FeedPagesFromIndexes';

  override up(): void {
    // One transaction: the rebuild's sort and the index builds get room for a registry of millions.
    this.addSql(`set local maintenance_work_mem = '512MB'`);
    this.addSql(`drop index entity_filters_idx`);
    this.addSql(`create index entity_filters_idx on entity (id) include (entity_type, state, uuid)`);
    this.addSql(`drop index revision_entity_idx`);
    this.addSql(`create index revision_entity_idx on revision (entity_id, seq) include (rev, metadata_rev)`);
  }

  override down(): void {
    this.addSql(`drop index revision_entity_idx`);
    this.addSql(`create index revision_entity_idx on revision (entity_id, seq)`);
    this.addSql(`drop index entity_filters_idx`);
    this.addSql(`create index entity_filters_idx on entity (id) include (entity_type, state)`);
  }
}
