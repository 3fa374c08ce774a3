import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileSearch } from '../../db/search/compile.ts';
import { fulltextTextWords } from '../../db/search/fulltext-page.ts';
import { wordsHeldWhole } from '../../db/search/words-held-whole.ts';
import { inTransaction } from '../../db/sql.ts';
import type { CreateEntityCommand, Item, Part } from '../../domain/model.ts';
import { normalizeForSearch } from '../../domain/text.ts';
import { generateCreates } from '../../bench/lib/generate.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { applyThroughWritePath } from '../support/write-path.ts';

// FULLTEXT pages of texts whose words are not all ASCII after normalisation
// (`łukasz`, `straße`, `søren`, Cyrillic) are compared with a plain-SQL ranking
// of every match. Such words are not walked in name_word_rank_idx order: a page
// of two or more words is read from the records holding each word (whole, the
// typed last word at a word's start) when enough of them hold every word in one
// name, and every match is ranked otherwise. The records below hold the words
// in one name, only as beginnings of longer words, across two names, or only
// one of them, so that both ways are taken and each has records to get wrong.

const run = randomUUID().slice(0, 8);
const TYPES = ['PERSON', 'FAMILY'].map((type) => `SM-${run}-${type}`);
/** A generator's seed also makes its records' UUIDs: drawn for each run, as other files' records share the database. */
const SEED = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);

/** One name of a record: its surname and, when it has one, its given name. */
interface NameSpec {
  surname: string;
  given?: string;
}

/** Records of the same names (the first preferred), and how many of each type. */
interface RecordGroup {
  names: NameSpec[];
  perType: [number, number];
}

const RECORD_GROUPS: RecordGroup[] = [
  // `łukasz jan`, `jan łuk`, `jan łukas`, `jan łukasz,`, `łukasz ja`, `jan ł`.
  { names: [{ surname: 'Łukasz', given: 'Jan' }], perType: [12, 4] },
  { names: [{ surname: 'Łukasz', given: 'Jana' }], perType: [6, 2] },
  { names: [{ surname: 'Łukaszewski', given: 'Jan' }], perType: [8, 3] },
  { names: [{ surname: 'Łukasiewicz', given: 'Jan' }], perType: [8, 3] },
  {
    names: [
      { surname: 'Łukasz', given: 'Petr' },
      { surname: 'Novák', given: 'Jan' },
    ],
    perType: [6, 2],
  },
  { names: [{ surname: 'Novák', given: 'Jan' }, { surname: 'Łukasz' }], perType: [4, 2] },
  { names: [{ surname: 'Łukasz' }], perType: [5, 2] },
  // `straße, jan`, `jan straß`.
  { names: [{ surname: 'Straße', given: 'Jan' }], perType: [5, 1] },
  { names: [{ surname: 'Straße', given: 'Jana' }], perType: [3, 1] },
  { names: [{ surname: 'Straßer', given: 'Jana' }], perType: [4, 2] },
  {
    names: [
      { surname: 'Straße', given: 'Petr' },
      { surname: 'Svoboda', given: 'Jan' },
    ],
    perType: [3, 1],
  },
  { names: [{ surname: 'Straße' }], perType: [3, 1] },
  // `søren`, `jørg`, `søren jørg`.
  { names: [{ surname: 'Kierkegaard', given: 'Søren' }], perType: [6, 2] },
  { names: [{ surname: 'Sørensen', given: 'Petr' }], perType: [5, 3] },
  { names: [{ surname: 'Jørgensen', given: 'Søren' }], perType: [4, 1] },
  { names: [{ surname: 'Jørgensen', given: 'Jan' }], perType: [4, 3] },
  {
    names: [
      { surname: 'Jørg', given: 'Petr' },
      { surname: 'Sørensen', given: 'Jana' },
    ],
    perType: [2, 1],
  },
  // `jan łódź` (normalised `łodz`).
  { names: [{ surname: 'Łódź', given: 'Jan' }], perType: [4, 1] },
  { names: [{ surname: 'Łódzki', given: 'Jan' }], perType: [4, 2] },
  { names: [{ surname: 'Łódź', given: 'Petr' }], perType: [3, 1] },
  // `иван пет`.
  { names: [{ surname: 'Петров', given: 'Иван' }], perType: [7, 3] },
  { names: [{ surname: 'Петрова', given: 'Анна' }], perType: [3, 1] },
  { names: [{ surname: 'Иванов', given: 'Пётр' }], perType: [4, 2] },
  // Common names: words that `jan` begins, and records matching none of the texts.
  { names: [{ surname: 'Novák', given: 'Jan' }], perType: [40, 20] },
  { names: [{ surname: 'Dvořák', given: 'Jana' }], perType: [30, 15] },
  { names: [{ surname: 'Svoboda', given: 'Petr' }], perType: [30, 15] },
  { names: [{ surname: 'Janáček', given: 'Petr' }], perType: [10, 5] },
];

/**
 * The texts, each with at least one word beyond ASCII. `jan łukas`, `jan łódź`, `straße, jan` and `łukasz ja` end in a
 * typed word whose ending trigram pg_trgm shows as text (`as `, `dz `, `an `, `ja `); `jan straß`, `иван пет` and
 * `jan ł` in one it shows hashed. `søren` and `jørg` are one word (never read best first); `jan łukasz,` has no typed
 * word (a separator ends it); in `łuk jan` no name holds `łuk` whole, so it counts as a beginning too.
 */
const TEXTS = [
  'łukasz jan',
  'jan łuk',
  'jan łukas',
  'jan łukasz,',
  'łukasz ja',
  'jan ł',
  'straße, jan',
  'jan straß',
  'søren',
  'jørg',
  'søren jørg',
  'jan łódź',
  'иван пет',
  'łuk jan',
];

/** Pages and page sizes of each text: the first and second page of ten, and a small page. */
const PAGES = [
  [1, 10],
  [2, 10],
  [1, 3],
] as const;

/** The generator's records with their names replaced by a group's, a second PT_NAME part for a second name. */
function recordsOfType(position: number, entityType: string): CreateEntityCommand[] {
  const specs = RECORD_GROUPS.flatMap((group) => Array.from({ length: group.perType[position]! }, () => group.names));
  const generated = [...generateCreates(specs.length, { seed: SEED + position, entityType, localIdPrefix: `b${position}-` })];
  return generated.map((record, index) => {
    const [first, ...others] = specs[index]!;
    const namePart = record.parts[0]!;
    // The generated part's other items (degree, dates and serial) stay: they keep each preferred name unique.
    const kept = namePart.items.filter((item) => item.type !== 'NM_MAIN' && item.type !== 'NM_MINOR');
    const parts: Part[] = [
      { ...namePart, items: [...nameItems(first!), ...kept] },
      ...others.map((spec, other) => ({
        partUuid: randomUUID(),
        type: 'PT_NAME' as const,
        items: [...nameItems(spec), { kind: 'string' as const, type: 'NM_SUP_GEN', value: `b${position}-${index}-${other}` }],
      })),
      ...record.parts.slice(1),
    ];
    return { ...record, parts };
  });
}

function nameItems(spec: NameSpec): Item[] {
  return [
    { kind: 'string', type: 'NM_MAIN', value: spec.surname },
    ...(spec.given === undefined ? [] : [{ kind: 'string' as const, type: 'NM_MINOR', value: spec.given }]),
  ];
}

/** A character between name words, as name_words() splits them (every ASCII character but 0-9, A-Z, a-z). */
const NAME_SEPARATOR = '[\\x01-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]';

/** Runs of ASCII characters other than letters and digits (a normalised text has no upper case). */
const TEXT_SEPARATORS = /[^0-9a-z\u{80}-\u{10ffff}]+/u;

/**
 * A normalised text's words as the ranking counts them, read plainly: split at ASCII separators; the last word, of
 * any length, is a beginning unless a separator follows it, and so is any word no name holds whole; the others count
 * whole.
 */
function textWords(text: string, heldWhole: ReadonlySet<string>): { words: string[]; whole: string[]; beginnings: string[] } {
  const words = text.split(TEXT_SEPARATORS).filter((word) => word !== '');
  const last = words.at(-1);
  const endsInWord = !/[^0-9a-z\u{80}-\u{10ffff}]$/u.test(text);
  const typed = last !== undefined && endsInWord ? last : undefined;
  const distinct = [...new Set(words)];
  const beginning = (word: string) => word === typed || !heldWhole.has(word);
  return { words: distinct, whole: distinct.filter((word) => !beginning(word)), beginnings: distinct.filter(beginning) };
}

/** The words of $1 that some name (of any record) holds whole, in plain SQL. */
const WORDS_HELD_WHOLE = `
  select w as word from unnest($1::text[]) w
   where exists (
     select from search_value sv
      where sv.kind = 'name' and sv.value_norm ~ ('(^|${NAME_SEPARATOR})' || w || '($|${NAME_SEPARATOR})')
   )`;

/** One ranked match of the reference: its id and how many of the text's words its best name holds. */
interface RankedMatch {
  id: string;
  word_rank: number;
}

/**
 * Every match of a text among records of `types`, ranked in plain SQL: records with, for each word, a name word
 * beginning with it; each by its best name (words held: the whole ones whole, the others at a word's start; then
 * shared pg_trgm trigrams over those of either, the text's being the whole words' and the other words' but their
 * ending ones; then the preferred name), best first, then by id.
 * $1 the words, $2 the whole words, $3 the words held as beginnings, $4 their ending trigrams, $5 the types.
 */
const RANKED_REFERENCE = `
  with text_trigrams as (
    select array(
      select unnest(show_trgm(array_to_string($2::text[], ' ')))
      union select t from unnest($3::text[]) with ordinality b(w, i), unnest(show_trgm(b.w)) t where t <> ($4::text[])[b.i]
    ) as t
  ), matches as (
    select e.id from entity e
     where e.entity_type = any($5::text[])
       and (select bool_and(exists (
              select from search_value m
               where m.entity_id = e.id and m.kind = 'name' and m.value_norm ~ ('(^|${NAME_SEPARATOR})' || w)
            )) from unnest($1::text[]) w)
  ), names as (
    select sv.entity_id, sv.preferred,
           (select count(*) from unnest($2::text[]) w where sv.value_norm ~ ('(^|${NAME_SEPARATOR})' || w || '($|${NAME_SEPARATOR})'))
             + (select count(*) from unnest($3::text[]) w where sv.value_norm ~ ('(^|${NAME_SEPARATOR})' || w)) as word_rank,
           (select count(*) from unnest(show_trgm(sv.value_norm)) n, text_trigrams tt where n = any(tt.t)) as shared,
           cardinality(show_trgm(sv.value_norm)) as own
      from matches m join search_value sv on sv.entity_id = m.id and sv.kind = 'name'
  ), best as (
    select distinct on (n.entity_id) n.entity_id, n.word_rank,
           n.shared::real / (cardinality(tt.t) + n.own - n.shared)::real as similarity
      from names n, text_trigrams tt
     order by n.entity_id, n.word_rank desc, similarity desc, n.preferred desc
  ) select entity_id::text as id, word_rank::int from best order by word_rank desc, similarity desc, entity_id`;

/** A word's ending trigram: the one of show_trgm(word) that extending the word takes away (hashed beyond ASCII). */
const ENDING_TRIGRAM = `select array(select unnest(show_trgm($1::text)) except select unnest(show_trgm($1::text || 'q'))) as ending`;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Subplan Name'?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/**
 * The loops of each read of name_word (its table or an index of it) in an EXPLAIN ANALYZE plan (0: a branch never
 * executed), outside the CTE tier_hits: there the records holding each word are read whichever way the page is
 * served; elsewhere name_word is read only for the matches' ids, to rank every match. By relation, not by how it is
 * read: on a table this small the planner may read the words' lists by a sequential scan.
 */
function matchReads(node: PlanNode): number[] {
  if (node['Subplan Name'] === 'CTE tier_hits') return [];
  const readsNameWord = node['Relation Name'] === 'name_word' || node['Index Name']?.startsWith('name_word_') === true;
  return [...(readsNameWord ? [node['Actual Loops'] ?? 0] : []), ...(node.Plans ?? []).flatMap(matchReads)];
}

describe('FULLTEXT pages of words beyond ASCII', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ worker: false });
    // Through the write path's own plan, one transaction per type, as a batch is applied.
    for (const [position, entityType] of TYPES.entries()) {
      const commands = recordsOfType(position, entityType);
      await applyThroughWritePath(harness, commands, { id: `sender-${run}`, name: `Sender ${run}`, uuid: randomUUID() });
    }
  }, 300_000);

  afterAll(async () => {
    await harness?.close();
  });

  it('answers each page as ranking every match would, from the records holding every word when they hold the page', async () => {
    // How the pages of texts of several words were served: both ways, or the check of the way proves little.
    const ways = { bestFirst: 0, everyMatch: 0 };
    for (const text of TEXTS) {
      const normalised = normalizeForSearch(text);
      const heldWhole = new Set(
        (await harness.sql<{ word: string }>(WORDS_HELD_WHOLE, [fulltextTextWords(normalised)])).map((row) => row.word),
      );
      expect(await wordsHeldWhole(harness.db.pool, text), `${text}: the words held whole`).toEqual(heldWhole);
      const { words, whole, beginnings } = textWords(normalised, heldWhole);
      // The words go into regular expressions of the reference as they are.
      expect(
        words.every((word) => /^[\p{L}\p{N}]+$/u.test(word)),
        `${text}: letters and digits`,
      ).toBe(true);
      expect(
        words.some((word) => /[^\p{ASCII}]/u.test(word)),
        `${text}: a word beyond ASCII`,
      ).toBe(true);
      const endings: string[] = [];
      for (const word of beginnings) {
        const ending = (await harness.sql<{ ending: string[] }>(ENDING_TRIGRAM, [word]))[0]!.ending;
        expect(ending.length, `${text}: one ending trigram of ${word}`).toBe(1);
        // Where pg_trgm shows it as text, it is the word's last two letters (a space before one letter) and a space.
        const lastTwo = ` ${word}`.slice(-2);
        if (/^[ a-z0-9][a-z0-9]$/.test(lastTwo)) expect(ending[0]).toBe(`${lastTwo} `);
        else expect(ending[0]).toMatch(/^0x[0-9a-f]+$/);
        endings.push(ending[0]!);
      }
      for (const types of [TYPES, [TYPES[1]!]]) {
        for (const [page, pageSize] of PAGES) {
          const label = `${text}, ${types.length} types, page ${page} of ${pageSize}`;
          const compiled = compileSearch({ text, types }, { page, pageSize }, 'FULLTEXT', 1_000_000, heldWhole);
          // Words beyond ASCII are never walked in name_word_rank_idx order.
          expect(compiled.page.text.includes('walk_last'), label).toBe(false);
          const { got, ranked, plan } = await inTransaction(harness.db.pool, async (client) => {
            await client.query('set transaction isolation level repeatable read');
            const answered = await client.query<{ id: string }>(compiled.page);
            const reference = await client.query<RankedMatch>(RANKED_REFERENCE, [words, whole, beginnings, endings, types]);
            const explained = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({
              text: `explain (analyze, format json) ${compiled.page.text}`,
              values: compiled.page.values,
            });
            return {
              got: answered.rows.map((row) => String(row.id)),
              ranked: reference.rows,
              plan: explained.rows[0]!['QUERY PLAN'][0].Plan,
            };
          });
          const expected = ranked.slice((page - 1) * pageSize, page * pageSize).map((row) => row.id);
          if (page === 1) expect(expected.length, `${label}: the reference has matches`).toBeGreaterThan(0);
          expect(got, label).toEqual(expected);
          // Records with a name holding every word; with two words or more, as many as the page's end let it be read
          // from the records holding each word. One word is always ranked among every match.
          const holders = ranked.filter((row) => row.word_rank === words.length).length;
          const everyMatchRead = matchReads(plan).some((loops) => loops > 0);
          expect(everyMatchRead, `${label}: ${holders} of ${ranked.length} matches hold every word`).toBe(
            words.length < 2 || holders < page * pageSize,
          );
          if (words.length >= 2) ways[everyMatchRead ? 'everyMatch' : 'bestFirst'] += 1;
        }
      }
    }
    expect(ways.bestFirst).toBeGreaterThan(0);
    expect(ways.everyMatch).toBeGreaterThan(0);
  });
});
