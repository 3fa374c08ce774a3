import { Migration } from '@mikro-orm/migrations';

// Search reads that cost what they answer on a registry larger than memory
// (decision 0154): each index a search reads holds what the search needs of
// it, so a probe reads the index alone (an index-only scan), not a heap page
// of entity or search_value per match (at 3,000,000 records those tables are
// 18 and 14 GB; their indexes below a tenth of that).
//  - entity_filters_idx: an entity's type and state by its id, for the types
//    and states a search's matches are narrowed by;
//  - name_word_entity_idx: an entity's words (a `not` of a name is a probe of
//    the entity's words);
//  - search_value_type_idx: one value of an item type is one range of the
//    key, in entity id order, so that a page reads it in windows of ids
//    (db/search/windowed-page.ts); the columns a value test compares ride
//    along;
//  - search_value_name_entity_idx: an entity's names in their normalised
//    form, which FULLTEXT ranks and a needle spanning words is compared with.
// search_reads_capped() refuses a page read in windows once it has read more
// matches than the service counts (SEARCH_MAX_MATCHES), with the SQLSTATE of
// search_capped().
export class Migration20261129000100SearchPagesInIdOrder extends Migration {
  override name = 'Migration20261129000100SearchPagesInIdOrder';

  override up(): void {
    this.addSql(`create index entity_filters_idx on entity (id) include (entity_type, state)`);
    this.addSql(`drop index name_word_entity_idx`);
    this.addSql(`create index name_word_entity_idx on name_word (entity_id) include (word, preferred)`);
    this.addSql(`drop index search_value_type_idx`);
    this.addSql(
      `create index search_value_type_idx on search_value (item_type, value_norm text_pattern_ops, entity_id) include (kind, part_type, preferred)`,
    );
    this.addSql(`drop index search_value_name_entity_idx`);
    this.addSql(
      `create index search_value_name_entity_idx on search_value (entity_id) include (value_norm, part_type, preferred) where kind = 'name'`,
    );
    this.addSql(`
      create function search_reads_capped(reads bigint, cap bigint) returns boolean language plpgsql volatile as $$
      begin
        if cap > 0 and reads > cap then
          raise exception 'a condition of the search matches more than % rows', cap using errcode = '54E01', detail = cap::text;
        end if;
        return true;
      end $$`);
  }

  override down(): void {
    this.addSql('drop function if exists search_reads_capped(bigint, bigint)');
    this.addSql(`drop index search_value_name_entity_idx`);
    this.addSql(`create index search_value_name_entity_idx on search_value (entity_id) where kind = 'name'`);
    this.addSql(`drop index search_value_type_idx`);
    this.addSql(`create index search_value_type_idx on search_value (item_type, value_norm text_pattern_ops)`);
    this.addSql(`drop index name_word_entity_idx`);
    this.addSql(`create index name_word_entity_idx on name_word (entity_id)`);
    this.addSql(`drop index entity_filters_idx`);
  }
}
