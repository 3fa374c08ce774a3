import { pageOffset } from '../../domain/paging.ts';
import type { Paging } from '../../domain/search-query.ts';
import { needleWords } from './name-words.ts';
import { beginsWith, entityProbe, RESULT_COLUMNS, type Params, type SqlQuery } from './sql-parts.ts';

// The page of a FULLTEXT search (decisions 0156, 0209 and 0210). Each
// candidate's names are ranked from search_value_name_entity_idx alone: by how
// many words of the text the name holds, then by pg_trgm similarity to the
// text, then the preferred name first; records follow their best names, then
// their ids.
//
// A word may be one still being typed (`jan nov`) or one no name holds whole
// (`nov jan`, `nov` meant whole): the text's last word unless a separator
// follows it, and any word name_vocabulary lacks. A name holds such a word when
// one of its words begins with it, and the trigram that says where the word
// ends is left out of the text's trigrams. The other words count when a name
// holds them whole. A name holding every word then holds all the text's
// trigrams (for words of ASCII letters and digits, which name_words() and
// pg_trgm both take for one word), so its similarity is the text's trigrams
// over its own: the fewer it has, the better, which is the order of
// name_word_rank_idx (word, trigrams, entity_id). The page is read from that
// order when the best-ranked records hold it; only when they do not is every
// match ranked.

/** Letters and digits of ASCII, which name_words() and pg_trgm (in any locale) both take for one word. */
const RANKED_WORD = /^[a-z0-9]+$/;

/** The words of a normalised FULLTEXT text as its ranking counts them. */
interface FulltextWords {
  /** Words a name holds when it holds them whole. */
  whole: string[];
  /** Words a name holds when one of its words begins with them: the last one, unless a separator ends it, and any no name holds whole. */
  beginnings: string[];
}

/** The distinct words of a normalised FULLTEXT text: those name_vocabulary is asked about (heldWhole of fulltextWords). */
export function fulltextTextWords(text: string): string[] {
  return [...new Set(needleWords(text).map((word) => word.word))];
}

/** The words of a normalised text, given those of them some name holds whole (name_vocabulary). */
export function fulltextWords(text: string, heldWhole: ReadonlySet<string>): FulltextWords {
  const last = needleWords(text).at(-1);
  // A separator after the last word (`novák,`) says it is finished.
  const typed = last !== undefined && (last.match === 'prefix' || last.match === 'inside') ? last.word : undefined;
  const beginning = (word: string) => word === typed || !heldWhole.has(word);
  const words = fulltextTextWords(text);
  return { whole: words.filter((word) => !beginning(word)), beginnings: words.filter(beginning) };
}

/** How many words a name holding the whole text holds: its best word rank. */
function wordCount(words: FulltextWords): number {
  return words.whole.length + words.beginnings.length;
}

export interface FulltextPageInput {
  /** The normalised text. */
  text: string;
  /** The text's words (fulltextTextWords) that some name holds whole: name_vocabulary's. */
  heldWhole: ReadonlySet<string>;
  /** The matches with the search's other sets, distinct and in id order, as a FROM item `ids`. */
  ids: string;
  /** How many match sets the search has (the text's own included). */
  setCount: number;
  /** The search's filters on entity (alias e). */
  filters: readonly string[];
  params: Params;
  /** SQL of the search's entity types (a text[] parameter), when it has types. */
  types: string | undefined;
  paging: Paging;
}

/** The page's query: the matches' best names ranked, the page's rows with the best name shown as their lookup. */
export function fulltextPage(input: FulltextPageInput): SqlQuery {
  const { params, paging } = input;
  const words = fulltextWords(input.text, input.heldWhole);
  const offset = params.add(pageOffset(paging), 'bigint');
  const limit = params.add(paging.pageSize, 'bigint');
  const need = `(${offset} + ${limit})`;
  const ranked = rankedNames(input.text, words, params);
  const filtered = input.filters.length > 0 ? `, ${entityProbe('ids.id', '1', input.filters)} f` : '';
  const everyMatch = ranked(`select ids.id from ${input.ids}${filtered}`);
  const tier = input.setCount === 1 && wordCount(words) > 0 ? bestFirstTier(words, input, need, ranked) : undefined;
  const hits =
    tier === undefined
      ? `hits as (${everyMatch})`
      : `${tier}, hits as (
          select * from tier_hits where (select yes from enough)
          union all ${everyMatch} where not (select yes from enough)
        )`;
  // The best name's shown form is found for the page's rows only: among the entity's names by ordering, not by
  // `value_norm =`, which the trigram index would serve.
  return {
    text: `with ${words.beginnings.length === 0 ? '' : `${textTrigrams(words, params)}, `}${hits}, page as (
        select * from hits order by word_rank desc, rank desc, id offset ${offset} limit ${limit}
      ) select ${RESULT_COLUMNS}, shown.lookup_value, shown.lookup_part_type
          from page, ${entityProbe('page.id', RESULT_COLUMNS, [])} e, lateral (
            select sv.value as lookup_value, sv.part_type as lookup_part_type from search_value sv
             where sv.entity_id = page.id and sv.kind = 'name'
             order by sv.value_norm = page.best_norm and sv.preferred = page.best_preferred desc, sv.value limit 1
          ) shown
         order by page.word_rank desc, page.rank desc, page.id`,
    values: params.values,
  };
}

/**
 * The CTE `text_trigrams`: the trigrams a name is compared with. Those of the whole words, and of each word held as a
 * beginning all but the one ending it: its trigrams that `word || 'x'` shares (pg_trgm shows trigrams beyond ASCII as
 * hashes, so the ending one is found by what extending the word changes, not by its spelling).
 */
function textTrigrams(words: FulltextWords, params: Params): string {
  return `text_trigrams as materialized (
      select array(
        select unnest(show_trgm(${params.add(words.whole.join(' '), 'text')}))
        union select t from unnest(${params.add(words.beginnings, 'text[]')}) b, unnest(show_trgm(b)) t where t = any(show_trgm(b || 'x'))
      ) as trigrams
    )`;
}

/** SQL ranking the names of each candidate (a select of `id`): its best name, with how many words it holds and its similarity. */
function rankedNames(text: string, words: FulltextWords, params: Params): (candidates: string) => string {
  const beginnings = words.beginnings.map((word) => ` + coalesce(bool_or(starts_with(w, ${params.add(word, 'text')})), false)::int`);
  const wordRank = `(select count(*) filter (where w = any(${params.add(words.whole, 'text[]')}))${beginnings.join('')}
                     from name_words(sv.value_norm) w)`;
  let rank: string;
  if (words.beginnings.length === 0) {
    rank = `similarity(${params.add(text, 'text')}, sv.value_norm)`;
  } else {
    // pg_trgm's similarity with the text's trigrams of text_trigrams: shared trigrams over those of either (float4).
    const shared = 'count(*) filter (where t = any((select trigrams from text_trigrams)::text[]))';
    rank = `(select ${shared}::real / (cardinality((select trigrams from text_trigrams)) + count(*) - ${shared})::real
               from unnest(show_trgm(sv.value_norm)) t)`;
  }
  return (candidates) => `select c.id, best.*
      from (${candidates}) c, lateral (
        select sv.value_norm as best_norm, sv.preferred as best_preferred, ${wordRank} as word_rank, ${rank} as rank
          from search_value sv where sv.entity_id = c.id and sv.kind = 'name'
         order by word_rank desc, rank desc, sv.preferred desc, sv.value_norm limit 1
      ) best`;
}

/**
 * The CTEs `tier_hits` (ranked candidates that hold the best matches) and `enough` (whether they hold the page) of a
 * FULLTEXT text that is all of its search's sets; undefined when no such tier is read.
 *  - Words of ASCII letters and digits: walkedTier.
 *  - Other words, two or more: the entities holding each of them (in any of their names) are few beside the matches
 *    (records holding `jan` whole and a word beginning with `łuk`, against those with words beginning with `jan`);
 *    each is ranked, and they hold the page when as many of them have a name holding every word.
 */
function bestFirstTier(
  words: FulltextWords,
  input: FulltextPageInput,
  need: string,
  ranked: (candidates: string) => string,
): string | undefined {
  const { params } = input;
  const probe = input.filters.length > 0 ? `, ${entityProbe('nw.entity_id', '1', input.filters)} f` : '';
  const types = input.types === undefined ? '' : ` and nw.entity_type = any(${input.types})`;
  const all = [...words.whole, ...words.beginnings];
  if (all.every((word) => RANKED_WORD.test(word))) return walkedTier(words, probe, types, params, need, ranked);
  if (all.length < 2) return undefined;
  const holding = [
    ...words.whole.map((word) => `select nw.entity_id as id from name_word nw${probe} where nw.word = ${params.add(word, 'text')}${types}`),
    ...words.beginnings.map(
      (word) => `select nw.entity_id as id from name_word nw${probe}
            where nw.word = any(array(select v.word from name_vocabulary v where ${beginsWith('v.word', word, params)}))${types}`,
    ),
  ].join(' intersect ');
  return `tier_hits as materialized (${ranked(holding)}
      ), enough as (select count(*) filter (where word_rank = ${all.length}) >= ${need} as yes from tier_hits)`;
}

/** A word of the text as a name must hold it: whole, or as a word's beginning. */
interface HeldWord {
  word: string;
  beginning: boolean;
}

/**
 * The tier of a text of ASCII words: a walk of name_word_rank_idx in (trigrams, entity_id) order for its longest word
 * (the likeliest to be rare; a whole word on a tie), keeping the entities that hold the other words too (one probe of
 * name_word each), 2 × (offset + limit) entries (an entity has at most two per word: in its preferred name and in
 * another). A word held as a beginning is walked as every word of name_vocabulary it begins, each word's entries in
 * that order, merged. A word no name holds ends the walk before it starts.
 *
 * An entry counts the trigrams of the entity's shortest name holding its word; the entity's names holding every word
 * have at least as many. So an entity not reached ranks after each candidate whose best name holds every word and
 * whose (trigrams, id) is not past the walk's last entry: the walk holds the page when `need` candidates are such, or
 * when it read every entity holding the words. When it does not (the words held apart, in two names of most entities
 * walked), every match is ranked.
 */
function walkedTier(
  words: FulltextWords,
  probe: string,
  types: string,
  params: Params,
  need: string,
  ranked: (candidates: string) => string,
): string {
  const all: HeldWord[] = [
    ...words.whole.map((word) => ({ word, beginning: false })),
    ...words.beginnings.map((word) => ({ word, beginning: true })),
  ];
  const walkedWord = all.reduce((longest, word) => (word.word.length > longest.word.length ? word : longest));
  const others = all.filter((word) => word !== walkedWord);
  // A word held whole is one key of name_word; a beginning is looked for among the entity's own words
  // (name_word_entity_idx), a few entries each. OFFSET 0 keeps that a probe per entry (as a semi-join, the planner may
  // read every entry beginning with the word instead).
  const holdsOthers = others
    .map(({ word, beginning }) =>
      beginning
        ? ` and exists (select from name_word o where o.entity_id = nw.entity_id and starts_with(o.word, ${params.add(word, 'text')}) offset 0)`
        : ` and exists (select from name_word o where o.word = ${params.add(word, 'text')} and o.entity_id = nw.entity_id)`,
    )
    .join('');
  const wholeOthers = others.filter((word) => !word.beginning).map((word) => word.word);
  const othersKnown = [
    ...(wholeOthers.length > 0
      ? [` and (select count(*) from name_vocabulary v where v.word = any(${params.add(wholeOthers, 'text[]')})) = ${wholeOthers.length}`]
      : []),
    ...others
      .filter((word) => word.beginning)
      .map(({ word }) => ` and exists (select from name_vocabulary v where ${beginsWith('v.word', word, params)})`),
  ].join('');
  const walked = walkedWord.beginning
    ? `select x.id, x.trigrams from name_vocabulary v, lateral (
          select nw.entity_id as id, nw.trigrams from name_word nw${probe}
           where nw.word = v.word${types}${holdsOthers}
           order by nw.trigrams, nw.entity_id limit 2 * ${need}
        ) x
         where ${beginsWith('v.word', walkedWord.word, params)}${othersKnown}
         order by x.trigrams, x.id limit 2 * ${need}`
    : `select nw.entity_id as id, nw.trigrams from name_word nw${probe}
         where nw.word = ${params.add(walkedWord.word, 'text')}${types}${holdsOthers}${othersKnown}
         order by nw.trigrams, nw.entity_id limit 2 * ${need}`;
  return `walked as materialized (${walked}
      ), tier_hits as materialized (${ranked('select distinct w.id from walked w')}
      ), walk_last as (
        select w.trigrams, w.id, (select count(*) from walked) < 2 * ${need} as exhausted
          from walked w order by w.trigrams desc, w.id desc limit 1
      ), enough as (
        select count(*) filter (
          where h.word_rank = ${wordCount(words)} and (l.exhausted or (name_trigrams(h.best_norm), h.id) <= (l.trigrams, l.id))
        ) >= ${need} as yes
          from tier_hits h, walk_last l
      )`;
}
