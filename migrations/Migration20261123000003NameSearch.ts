import { Migration } from '@mikro-orm/migrations';

// Name searches (index `name`/`prefName`, FULLTEXT) look only at the rows of
// kind 'name', about one in 25 of search_value. In the trigram index over all
// values a common fragment ('novak') shares its trigrams with item values, so
// the planner priced that index out and walked every row of the table
// instead (6–11 s on 1,000,000 entities). A partial index on the names alone
// is small enough to be the obvious path. The compiler writes `kind = 'name'`
// as a literal, which lets the planner match this index's predicate.
export class Migration20261123000003NameSearch extends Migration {
  override name = 'Migration20261123000003NameSearch';

  override up(): void {
    this.addSql(`create index search_value_name_trgm_idx on search_value using gin (value_norm gin_trgm_ops) where kind = 'name'`);
  }

  override down(): void {
    this.addSql('drop index if exists search_value_name_trgm_idx');
  }
}
