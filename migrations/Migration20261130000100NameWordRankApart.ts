import { Migration } from '@mikro-orm/migrations';

// name_word_rank_idx serves one read: a FULLTEXT walk of a word's entries in
// (trigrams, entity_id) order. Keyed on the plain word, it also answered
// every `word = …` the planner met, and it took the windows of ids that
// searches read name words in (decisions 0155, 0211) from it: their bounds
// on entity_id were then tested on every entry of the word, not used as the
// range of name_word's key (EXPLAIN ANALYZE of `starts with "nov"` at
// 1,000,000 records: 257 buffers, 0.7 of the page's 1.9 ms). Keyed on the
// word in the "C" collation, it serves only a comparison made in that
// collation, which the walk alone writes (db/search/fulltext-page.ts); for
// words, equality is the same in either.
export class Migration20261130000100NameWordRankApart extends Migration {
  override name = 'Migration20261130000100NameWordRankApart';

  override up(): void {
    this.addSql(`set local maintenance_work_mem = '512MB'`);
    this.addSql('drop index name_word_rank_idx');
    this.addSql('create index name_word_rank_idx on name_word (word collate "C", trigrams, entity_id) include (entity_type)');
  }

  override down(): void {
    this.addSql(`set local maintenance_work_mem = '512MB'`);
    this.addSql('drop index name_word_rank_idx');
    this.addSql('create index name_word_rank_idx on name_word (word, trigrams, entity_id) include (entity_type)');
  }
}
