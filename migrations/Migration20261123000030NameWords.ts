import { Migration } from '@mikro-orm/migrations';

// Exact totals of a name search without visiting every match. `name
// CT_CONTAINS "Novák"` finds about 1 entity in 30; counting them through the
// trigram index visited one search_value heap page per match (34,000 pages
// on 1,000,000 entities, 200–300 ms). A needle without separators can only
// lie inside one word of a name, so it matches exactly the entities that
// hold a word containing it:
//  - name_vocabulary: every distinct word of every name (tens of thousands),
//    under a trigram index, answers "which words contain the needle";
//  - name_word (word, entity_id, preferred): which entities hold those words,
//    counted by an index-only scan of its primary key.
// A word is a maximal run of characters other than the ASCII separators
// (every ASCII character but 0-9, A-Z, a-z), in the normalised value
// (value_norm); db/search/name-words.ts holds the same definition.
//
// Both are kept by statement triggers on search_value, in the transaction of
// the statement that writes the names (the batch's own), so a search never
// sees words older than the rows it reads. The write path writes search_value
// with DELETE … WHERE entity_id = any(…) and COPY; TRUNCATE (benchmarks)
// empties name_word too. The triggers are ENABLE ALWAYS: loaders that run with
// session_replication_role = replica (bench/lib/load.ts) keep them too. The
// vocabulary only grows: a word no entity holds any more finds no name_word.
export class Migration20261123000030NameWords extends Migration {
  override name = 'Migration20261123000030NameWords';

  override up(): void {
    this.addSql(`
      create function name_words(value_norm text) returns setof text language sql immutable strict parallel safe
      as $$ select distinct word from regexp_split_to_table(value_norm, '[\\x01-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]+') word where word <> '' $$`);
    this.addSql(`create table name_vocabulary (word text primary key)`);
    this.addSql(`create index name_vocabulary_trgm_idx on name_vocabulary using gin (word gin_trgm_ops)`);
    this.addSql(`
      create table name_word (
        word text not null,
        entity_id bigint not null,
        preferred boolean not null,
        primary key (word, entity_id, preferred)
      )`);
    this.addSql(`create index name_word_entity_idx on name_word (entity_id)`);

    // Sorted inserts: two batches adding the same new words take their locks in one order (no deadlock).
    this.addSql(`
      create function name_words_added() returns trigger language plpgsql as $$
      begin
        insert into name_vocabulary (word)
          select distinct w from added a, name_words(a.value_norm) w where a.kind = 'name' order by 1
          on conflict do nothing;
        insert into name_word (word, entity_id, preferred)
          select distinct w, a.entity_id, a.preferred from added a, name_words(a.value_norm) w where a.kind = 'name' order by 1, 2, 3
          on conflict do nothing;
        return null;
      end $$`);
    // An entity's words are rebuilt from the names it still has: another name may hold the same word.
    this.addSql(`
      create function name_words_removed() returns trigger language plpgsql as $$
      declare
        ids bigint[];
      begin
        select array_agg(distinct entity_id) into ids from removed where kind = 'name';
        if ids is null then return null; end if;
        delete from name_word where entity_id = any(ids);
        insert into name_word (word, entity_id, preferred)
          select distinct w, sv.entity_id, sv.preferred from search_value sv, name_words(sv.value_norm) w
           where sv.entity_id = any(ids) and sv.kind = 'name' order by 1, 2, 3
          on conflict do nothing;
        return null;
      end $$`);
    this.addSql(`
      create function name_words_truncated() returns trigger language plpgsql as $$
      begin
        truncate name_word;
        return null;
      end $$`);
    this.addSql(
      `create trigger search_value_name_words_added after insert on search_value referencing new table as added for each statement execute function name_words_added()`,
    );
    this.addSql(
      `create trigger search_value_name_words_removed after delete on search_value referencing old table as removed for each statement execute function name_words_removed()`,
    );
    this.addSql(
      `create trigger search_value_name_words_truncated after truncate on search_value for each statement execute function name_words_truncated()`,
    );
    for (const trigger of ['added', 'removed', 'truncated'])
      this.addSql(`alter table search_value enable always trigger search_value_name_words_${trigger}`);

    // The names already stored.
    this.addSql(
      `insert into name_vocabulary (word) select distinct w from search_value sv, name_words(sv.value_norm) w where sv.kind = 'name'`,
    );
    this.addSql(
      `insert into name_word (word, entity_id, preferred) select distinct w, sv.entity_id, sv.preferred from search_value sv, name_words(sv.value_norm) w where sv.kind = 'name'`,
    );
  }

  override down(): void {
    this.addSql('drop trigger if exists search_value_name_words_added on search_value');
    this.addSql('drop trigger if exists search_value_name_words_removed on search_value');
    this.addSql('drop trigger if exists search_value_name_words_truncated on search_value');
    this.addSql('drop function if exists name_words_added(), name_words_removed(), name_words_truncated()');
    this.addSql('drop table if exists name_word, name_vocabulary');
    this.addSql('drop function if exists name_words(text)');
  }
}
