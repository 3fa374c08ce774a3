import { Migration } from '@mikro-orm/migrations';

// Each name word carries what a search narrows or ranks by (decision 0156):
//  - entity_type, the type of its entity, so that a name search with types
//    is read from name_word alone (a total with types counted its matches'
//    types by one probe of entity_filters_idx each: 421,915 probes, 1.58 s
//    at 3,000,000 records); kept by entity's trigger when a type changes;
//  - trigrams, the fewest distinct trigrams (pg_trgm) of the entity's names
//    holding the word whole: a name holding a one-word FULLTEXT text whole
//    is the most similar kind (word similarity 1), and among those the one
//    with the fewest trigrams is the most similar (similarity is the text's
//    trigrams over the name's), so name_word_rank_idx reads the best matches
//    of a word first.
// The table is rebuilt from the stored names (one pass, faster than updating
// every row in place) and its triggers now fill both columns.
/**
 * The trigger functions' insert of the words of the names in `source` (the statement's new rows, or the stored
 * ones) with their entity's type and fewest trigrams; sorted, as before, so that two batches adding the same words
 * take their locks in one order. A word already stored keeps the smaller count.
 */
const insertWords = (source: string, where: string) => `insert into name_word (word, entity_id, preferred, entity_type, trigrams)
          select w, sv.entity_id, sv.preferred, e.entity_type, min(name_trigrams(sv.value_norm))
            from ${source} sv join entity e on e.id = sv.entity_id, name_words(sv.value_norm) w
           where ${where}sv.kind = 'name'
           group by 1, 2, 3, 4 order by 1, 2, 3
          on conflict (word, entity_id, preferred) do update set trigrams = least(name_word.trigrams, excluded.trigrams);`;

export class Migration20261129000300NameWordRanks extends Migration {
  override name = 'Migration20261129000300NameWordRanks';

  override up(): void {
    // One transaction: the rebuild's sort and the index builds get room for a registry of millions.
    this.addSql(`set local maintenance_work_mem = '512MB'`);
    this.addSql(`set local work_mem = '256MB'`);
    this.addSql(`
      create function name_trigrams(value_norm text) returns integer language sql immutable strict parallel safe
      as $$ select coalesce(array_length(show_trgm(value_norm), 1), 0) $$`);
    this.addSql(`drop table name_word`);
    this.addSql(`
      create table name_word (
        word text not null,
        entity_id bigint not null,
        preferred boolean not null,
        entity_type text not null,
        trigrams integer not null
      )`);
    this.addSql(`
      insert into name_word (word, entity_id, preferred, entity_type, trigrams)
        select w, sv.entity_id, sv.preferred, e.entity_type, min(name_trigrams(sv.value_norm))
          from search_value sv join entity e on e.id = sv.entity_id, name_words(sv.value_norm) w
         where sv.kind = 'name'
         group by 1, 2, 3, 4`);
    this.addSql(`alter table name_word add primary key (word, entity_id, preferred) include (entity_type)`);
    this.addSql(`create index name_word_entity_idx on name_word (entity_id) include (word, preferred)`);
    this.addSql(`create index name_word_rank_idx on name_word (word, trigrams, entity_id) include (entity_type)`);

    this.addSql(`
      create or replace function name_words_added() returns trigger language plpgsql as $$
      begin
        ${insertWords('added', '')}
        return null;
      end $$`);
    this.addSql(`
      create or replace function name_words_removed() returns trigger language plpgsql as $$
      declare
        ids bigint[];
      begin
        select array_agg(distinct entity_id) into ids from removed where kind = 'name';
        if ids is null then return null; end if;
        delete from name_word where entity_id = any(ids);
        ${insertWords('search_value', 'sv.entity_id = any(ids) and ')}
        return null;
      end $$`);
    this.addSql(`
      create function name_word_entity_type() returns trigger language plpgsql as $$
      begin
        update name_word set entity_type = new.entity_type where entity_id = new.id;
        return null;
      end $$`);
    this.addSql(`
      create trigger entity_name_word_type after update of entity_type on entity
        for each row when (old.entity_type is distinct from new.entity_type) execute function name_word_entity_type()`);
    // Like the triggers on search_value: loaders that run with session_replication_role = replica keep it too.
    this.addSql(`alter table entity enable always trigger entity_name_word_type`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists entity_name_word_type on entity`);
    this.addSql(`drop function if exists name_word_entity_type()`);
    this.addSql(`
      create or replace function name_words_added() returns trigger language plpgsql as $$
      begin
        insert into name_word (word, entity_id, preferred)
          select distinct w, a.entity_id, a.preferred from added a, name_words(a.value_norm) w where a.kind = 'name' order by 1, 2, 3
          on conflict do nothing;
        return null;
      end $$`);
    this.addSql(`
      create or replace function name_words_removed() returns trigger language plpgsql as $$
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
    this.addSql(`drop index name_word_rank_idx`);
    this.addSql(`alter table name_word drop constraint name_word_pkey`);
    this.addSql(`alter table name_word drop column entity_type, drop column trigrams`);
    this.addSql(`alter table name_word add primary key (word, entity_id, preferred)`);
    this.addSql(`drop function if exists name_trigrams(text)`);
  }
}
