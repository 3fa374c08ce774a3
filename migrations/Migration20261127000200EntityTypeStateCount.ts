import { Migration } from '@mikro-orm/migrations';

// The exact total of a search by types and states alone is a count of the
// index entries of those types: at 1,000,000 entities, a quarter of them for
// one type. entity_type_state_idx (entity_type, state, id) holds a distinct
// key per entity (66 MB there); this index holds only the two columns, so
// B-tree deduplication keeps one key per type and state with a list of row
// pointers (7 MB), and the index-only count reads a tenth of the pages:
// 47-48 → 29-31 ms a count of 250,000 entities on the bench machine
// (docs/performance.md, "Fifth round"). The wider index stays for pages in
// id order of a rare type.
export class Migration20261127000200EntityTypeStateCount extends Migration {
  override name = 'Migration20261127000200EntityTypeStateCount';

  override up(): void {
    this.addSql('create index entity_type_state_count_idx on entity (entity_type, state)');
  }

  override down(): void {
    this.addSql('drop index if exists entity_type_state_count_idx');
  }
}
