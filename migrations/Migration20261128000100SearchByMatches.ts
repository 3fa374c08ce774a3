import { Migration } from '@mikro-orm/migrations';

// Name searches answered from indexes whose reads follow the matches, with no
// plan that depends on statistics (db/search/compile.ts, decision 0152):
//  - search_value_name_prefix_idx: the names (kind 'name') in code-point
//    order, with their entity and whether each is preferred: CT_EQ and
//    CT_STARTS_WITH on a name are one range of it;
//  - search_value_name_suffix_idx: the same names reversed, for CT_ENDS_WITH;
//  - search_value_name_entity_idx: an entity's names alone (FULLTEXT ranks
//    them; a needle with separators is compared on them), not its 25 values;
//  - name_vocabulary_prefix_idx: the words that begin with a text
//    (FULLTEXT: each word of the text begins a word of a name).
// search_capped() stops a search whose condition matches more rows than the
// service counts (SEARCH_MAX_MATCHES): the compiler reads at most cap + 1 of
// them, and the function raises SQLSTATE 54E01 when it got more, which the
// repository answers as too broad. PostgreSQL keeps the indexes in the
// statements that write search_value (the write path's COPY): the write path
// itself does not change.
export class Migration20261128000100SearchByMatches extends Migration {
  override name = 'Migration20261128000100SearchByMatches';

  override up(): void {
    this.addSql(
      `create index search_value_name_prefix_idx on search_value (value_norm text_pattern_ops) include (entity_id, preferred) where kind = 'name'`,
    );
    this.addSql(
      `create index search_value_name_suffix_idx on search_value (reverse(value_norm) text_pattern_ops) include (entity_id, preferred) where kind = 'name'`,
    );
    this.addSql(`create index search_value_name_entity_idx on search_value (entity_id) where kind = 'name'`);
    this.addSql(`create index name_vocabulary_prefix_idx on name_vocabulary (word text_pattern_ops)`);
    this.addSql(`
      create function search_capped(ids bigint[], cap integer) returns bigint[] language plpgsql immutable parallel safe as $$
      begin
        if cap > 0 and cardinality(ids) > cap then
          raise exception 'a condition of the search matches more than % rows', cap using errcode = '54E01', detail = cap::text;
        end if;
        return ids;
      end $$`);
  }

  override down(): void {
    this.addSql('drop function if exists search_capped(bigint[], integer)');
    this.addSql('drop index if exists name_vocabulary_prefix_idx');
    this.addSql('drop index if exists search_value_name_entity_idx');
    this.addSql('drop index if exists search_value_name_suffix_idx');
    this.addSql('drop index if exists search_value_name_prefix_idx');
  }
}
