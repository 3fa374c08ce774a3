import { normalizeForSearch } from '../../domain/text.ts';
import { pageOffset } from '../../domain/paging.ts';
import { parseDateInterval, SEARCH_DATE_PATTERN, searchUserKey, unitDateSearchText } from '../../domain/search-values.ts';
import { isInsideOneWord, needleWords, type NeedleWord } from './name-words.ts';
import { PAGE_WINDOW, windowedPageSql, type IdWindow } from './windowed-page.ts';
import { beginsWith, entityProbe, Params, RESULT_COLUMNS, type SqlQuery } from './sql-parts.ts';
import { fulltextPage } from './fulltext-page.ts';
import {
  ENTITY_ID_PATTERN,
  SEARCH_USER_ROLES,
  UUID_PATTERN,
  type Comparator,
  type Condition,
  type Paging,
  type SearchPartType,
  type SearchQuery,
  type SearchType,
} from '../../domain/search-query.ts';

// Compiles a validated search into parameterised SQL over entity (alias e),
// search_value, name_word, search_user and search_user_role. Every user value travels
// as a $n parameter; only fixed SQL fragments are concatenated. A text
// condition the whole query must meet, and that an index answers exactly, is
// a match set (matchSet): the entity ids it matches, read from that index
// and nothing else, so its cost follows its matches and no plan depends on
// the planner's statistics; entity is then read by primary key for those ids
// alone. Any other condition is an EXISTS over the search rows of the
// entity, tested per entity, so an entity counts once however many of its
// values match. Text is compared in its normalised form (domain/text.ts
// normalizeForSearch), which is what search_value.value_norm holds: LIKE
// forms use the pg_trgm GIN index, = and the order comparators the
// text_pattern_ops btree (the ~<~ family compares code points, whatever the
// database collation).

/** Which search rows a condition looks at, and how it compares their text. */
interface RowTest {
  kind: 'item' | 'name';
  preferred?: boolean;
  partType?: string;
  itemTypes?: string[];
  itemSpecs?: string[];
  comparator?: Comparator;
  /** The normalised value compared with value_norm. */
  needle?: string;
  /**
   * CT_CONTAINS of a date interval (its normalised ends and their dateKey):
   * also met by a date value whose interval contains it, as the known client
   * means its creation and extinction filters.
   */
  dates?: { from: string; to: string; fromKey: string; toKey: string };
}

/** A text condition that did not sit under a `not`: its matched value becomes the lookup of a result. */
export interface LookupMatcher {
  test: RowTest & { comparator: Comparator; needle: string };
  partTypes: SearchPartType[];
}

export interface CompiledSearch {
  /** One page of matches. */
  page: SqlQuery;
  /**
   * The total number of matches. Apart from the page, so that a page of a
   * common match stops after pageSize rows (a window count would make every
   * page visit every match) and the count gets a plan of its own, such as an
   * index-only scan for type and state filters.
   */
  count: SqlQuery;
  /**
   * The count reads at most SEARCH_MAX_MATCHES + 1 entities: a total above
   * the cap is refused as too broad, found by counting. False for the
   * totals summed from an index (types and states, a user in a role, match
   * sets alone), whose reads the sets' own caps bound.
   */
  countCapped: boolean;
  matchers: LookupMatcher[];
}

/** The restriction `part` conditions put on the rows of the conditions inside them. */
interface Scope {
  partTypes: SearchPartType[];
  /** Alias of the search row whose part a onePart condition is bound to. */
  partAlias?: string;
}

const ORDER_OPERATORS: Partial<Record<Comparator, string>> = {
  CT_GT: '~>~',
  CT_GTE: '~>=~',
  CT_LT: '~<~',
  CT_LTE: '~<=~',
};

const NUMERIC_OPERATORS: Partial<Record<Comparator, string>> = {
  CT_EQ: '=',
  CT_GT: '>',
  CT_GTE: '>=',
  CT_LT: '<',
  CT_LTE: '<=',
};

/** A LIKE pattern matching `text` literally: the backslash is LIKE's default escape. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

function compareText(expression: string, comparator: Comparator, needle: string, params: Params): string {
  switch (comparator) {
    case 'CT_EQ':
      return `${expression} = ${params.add(needle, 'text')}`;
    case 'CT_STARTS_WITH':
      return `${expression} like ${params.add(`${escapeLike(needle)}%`, 'text')}`;
    case 'CT_ENDS_WITH':
      return `${expression} like ${params.add(`%${escapeLike(needle)}`, 'text')}`;
    case 'CT_CONTAINS':
      return `${expression} like ${params.add(`%${escapeLike(needle)}%`, 'text')}`;
    default:
      return `${expression} ${ORDER_OPERATORS[comparator]} ${params.add(needle, 'text')}`;
  }
}

function partTypeTest(alias: string, partType: SearchPartType, params: Params): string {
  return partType === 'PT_PREF_NAME' ? `${alias}.preferred` : `${alias}.part_type = ${params.add(partType, 'text')}`;
}

/** SQL for dateKey (domain/search-values.ts) of the date-time text `bound`. */
function dateKeySql(bound: string): string {
  return `(substring(${bound} from '^([-+]?[0-9]+)-')::bigint * 10000000000 + translate(substring(${bound} from '^[-+]?[0-9]+-(.*)$'), '-t:', '')::bigint)`;
}

/** A four-digit year of the common era: such instants compare as text (code points) as they do in time. */
const PLAIN_DATE_TIME = /^[0-9]{4}-/;

/**
 * A date value (value_norm `from/to` or `from`) whose interval contains the
 * asked interval. The usual value (`YYYY-MM-DDthh:mm:ss`, one or two, 19 or
 * 39 characters) against a usual interval compares as text, which costs
 * about as little as the LIKE beside it; any other date (a year before the
 * common era or of more than four digits) is read by the pattern and
 * compared by dateKey. A regular expression on every date value took about
 * ten times as long: a total over 1,000,000 dates went from 0.4 s to 4-6 s.
 * The CASE keeps the casts away from values that are not dates (the planner
 * may order the operands of AND as it likes).
 */
function containsDates(column: string, dates: NonNullable<RowTest['dates']>, params: Params): string {
  const keys = `${dateKeySql(`split_part(${column}, '/', 1)`)} <= ${params.add(dates.fromKey, 'bigint')} and ${dateKeySql(`coalesce(nullif(split_part(${column}, '/', 2), ''), ${column})`)} >= ${params.add(dates.toKey, 'bigint')}`;
  if (!PLAIN_DATE_TIME.test(dates.from) || !PLAIN_DATE_TIME.test(dates.to))
    return `case when ${column} ~ '${SEARCH_DATE_PATTERN}' then ${keys} else false end`;
  const plain = `octet_length(${column}) in (19, 39) and substr(${column}, 5, 1) = '-' and substr(${column}, 11, 1) = 't'`;
  const text = `left(${column}, 19) ~<=~ ${params.add(dates.from, 'text')} and right(${column}, 19) ~>=~ ${params.add(dates.to, 'text')}`;
  return `case when ${plain} then ${text} when octet_length(${column}) between 20 and 49 and ${column} ~ '${SEARCH_DATE_PATTERN}' then ${keys} else false end`;
}

/** The predicates a search row `alias` of entity e must meet for `test` within `scope`. */
function rowPredicates(alias: string, test: RowTest, partTypes: readonly SearchPartType[], params: Params): string[] {
  const predicates = [`${alias}.kind = '${test.kind}'`];
  if (test.preferred) predicates.push(`${alias}.preferred`);
  for (const partType of partTypes) predicates.push(partTypeTest(alias, partType, params));
  if (test.partType !== undefined) predicates.push(`${alias}.part_type = ${params.add(test.partType, 'text')}`);
  if (test.itemTypes) predicates.push(`${alias}.item_type = any(${params.add(test.itemTypes, 'text[]')})`);
  if (test.itemSpecs) predicates.push(`${alias}.item_spec = any(${params.add(test.itemSpecs, 'text[]')})`);
  if (test.comparator !== undefined && test.needle !== undefined) {
    const text = compareText(`${alias}.value_norm`, test.comparator, test.needle, params);
    predicates.push(test.dates ? `(${text} or ${containsDates(`${alias}.value_norm`, test.dates, params)})` : text);
  }
  return predicates;
}

/** A match set asked for within an id window that its index does not read in id order (the page then reads the sets whole). */
class NotWindowed extends Error {}

class ConditionCompiler {
  readonly params: Params;
  readonly matchers: LookupMatcher[] = [];
  /** Rows a match set reads at most (cap + 1: more is refused, search_capped()); 0: no cap. */
  readonly maxMatches: number;
  /** The page's window: each set is read within it, uncapped (the window bounds its reads). */
  readonly window: IdWindow | undefined;
  /** SQL of the query's entity types (a text[] parameter): name word sets read only entries of those types. */
  readonly types: string | undefined;
  /** How many of the sets the whole query must meet hold only entities of `types` (then entity is not probed for them). */
  typedSets = 0;
  /** SQL of a page's end (offset + limit): each set is read for its first ids up to it alone (firstIdsPage). */
  firstIds: string | undefined;
  private aliases = 0;

  constructor(params: Params, maxMatches: number, window?: IdWindow, types?: readonly string[]) {
    this.params = params;
    this.maxMatches = maxMatches;
    this.window = window;
    this.types = types === undefined ? undefined : params.add(types, 'text[]');
  }

  private alias(prefix: string): string {
    this.aliases += 1;
    return `${prefix}${this.aliases}`;
  }

  private addMatcher(test: RowTest, scope: Scope, positive: boolean): void {
    if (positive && test.comparator !== undefined && test.needle !== undefined) {
      this.matchers.push({ test: { ...test, comparator: test.comparator, needle: test.needle }, partTypes: scope.partTypes });
    }
  }

  /**
   * The entities meeting `cond` as a set read from indexes (a select of
   * entity_id, repeats allowed), or undefined when `cond` is not of that
   * form: a row test matchSet answers, or AND/OR (and plain `part`) of such.
   * Each leaf reads at most maxMatches + 1 rows and is refused past that.
   */
  matchSet(cond: Condition, scope: Scope, positive: boolean): string | undefined {
    // Checked whole first: a set given up halfway would leave parameters the statement does not use.
    if (!isMatchSet(cond, scope)) return undefined;
    switch (cond.condType) {
      case 'and':
      case 'or':
        return cond.conds
          .map((child) => `(${this.matchSet(child, scope, positive)!})`)
          .join(cond.condType === 'and' ? ' intersect ' : ' union ');
      case 'part':
        return this.matchSet(cond.cond!, partScope(cond, scope), positive);
      default: {
        const test = rowTest(cond)!;
        this.addMatcher(test, scope, positive);
        return this.leafSet(test, scope);
      }
    }
  }

  /** The set of one row test: capped, or read within the page's window (NotWindowed when its index cannot). */
  leafSet(test: RowTest, scope: Scope): string {
    // Sorted by an expression, not the column: an index keyed by entity id would give that order and be walked from the
    // lowest id until the test had met enough rows (all of name_word_entity_idx for a rare word).
    if (this.firstIds !== undefined)
      return `select s.entity_id from (${matchSet(test, scope, this.params, undefined, this.types)!}) s order by s.entity_id + 0 limit ${this.firstIds}`;
    if (this.window === undefined) return this.capped(matchSet(test, scope, this.params, undefined, this.types)!);
    const set = matchSet(test, scope, this.params, this.window, this.types);
    if (set === undefined) throw new NotWindowed();
    return set;
  }

  /** A set's select read at most maxMatches + 1 rows deep; search_capped() raises past maxMatches. */
  capped(set: string): string {
    if (this.maxMatches <= 0 || this.window !== undefined) return set;
    const cap = this.params.add(this.maxMatches, 'integer');
    return `select unnest(search_capped(array(${set} limit ${cap} + 1), ${cap})) as entity_id`;
  }

  private existsRow(test: RowTest, scope: Scope, positive: boolean): string {
    const words = this.nameWords(test, scope, positive);
    if (words !== undefined) {
      this.addMatcher(test, scope, positive);
      return words;
    }
    const alias = this.alias('sv');
    const predicates = [`${alias}.entity_id = e.id`];
    if (scope.partAlias) predicates.push(`${alias}.part_uuid = ${scope.partAlias}.part_uuid`);
    this.addMatcher(test, scope, positive);
    predicates.push(...rowPredicates(alias, test, scope.partTypes, this.params));
    return `exists (select 1 from search_value ${alias} where ${predicates.join(' and ')}${perRow(positive)})`;
  }

  /**
   * A name containing a needle that holds no separator, through the word
   * index (db/search/name-words.ts), tested for one entity (under OR or NOT).
   * Undefined when the test is of another form.
   */
  private nameWords(test: RowTest, scope: Scope, positive: boolean): string | undefined {
    const alias = this.alias('nw');
    const predicates = nameWordPredicates(alias, test, scope, this.params);
    return (
      predicates &&
      `exists (select 1 from name_word ${alias} where ${alias}.entity_id = e.id and ${predicates.join(' and ')}${perRow(positive)})`
    );
  }

  /**
   * `conjunct`: the condition is one the whole query must meet (the root, or
   * under `and` and plain `part` conditions from it). The match sets among
   * its conjuncts are intersected into one array of entity ids that entity's
   * primary key is read by (entityFilters); the rest are tested per entity.
   */
  compile(cond: Condition, scope: Scope, positive: boolean, conjunct = false, sets: string[] = []): string {
    if (conjunct) {
      const set = this.matchSet(cond, scope, positive);
      if (set !== undefined) {
        sets.push(set);
        if (this.types !== undefined && isTypedSet(cond, scope)) this.typedSets += 1;
        return 'true';
      }
    }
    switch (cond.condType) {
      case 'and':
        return `(${cond.conds.map((child) => this.compile(child, scope, positive, conjunct, sets)).join(' and ')})`;
      case 'or':
        return `(${cond.conds.map((child) => this.compile(child, scope, positive)).join(' or ')})`;
      case 'not':
        return `not ${this.compile(cond.cond, scope, !positive)}`;
      case 'part':
        return this.compilePart(cond, scope, positive, conjunct, sets);
      case 'value':
      case 'index': {
        const test = rowTest(cond);
        return test ? this.existsRow(test, scope, positive) : this.compileEntityIndex(cond as EntityIndexCondition);
      }
    }
  }

  private compilePart(
    cond: Extract<Condition, { condType: 'part' }>,
    scope: Scope,
    positive: boolean,
    conjunct: boolean,
    sets: string[],
  ): string {
    const inner: Scope = { partTypes: cond.partType ? [...scope.partTypes, cond.partType] : scope.partTypes, partAlias: scope.partAlias };
    if (!cond.onePart) return cond.cond ? this.compile(cond.cond, inner, positive, conjunct, sets) : this.existsPart(inner);
    // onePart: one part of the entity satisfies the whole nested condition. A
    // search row of the first row test of a conjunction anchors that part, so
    // the part is found through the value indexes, not by visiting every part.
    const conjuncts = cond.cond === undefined ? [] : cond.cond.condType === 'and' ? cond.cond.conds : [cond.cond];
    const anchorIndex = conjuncts.findIndex((conjunct) => rowTest(conjunct) !== undefined);
    const anchor = anchorIndex === -1 ? undefined : rowTest(conjuncts[anchorIndex]!);
    const rest = conjuncts.filter((_, index) => index !== anchorIndex);
    // The entities holding the anchor's rows, a superset of the matches read from the anchor's index, narrow a
    // part the query must meet: each is then tested whole, and the search costs the anchor's matches.
    if (conjunct && anchor && !inner.partAlias && matchSet(anchor, inner, new Params()) !== undefined)
      sets.push(this.leafSet(anchor, inner));
    return this.existsPart(inner, anchor, positive, (bound) => rest.map((conjunct) => this.compile(conjunct, bound, positive)));
  }

  /**
   * A search row of e in `scope` (meeting `anchor` when given): the entity
   * has such a part; with `bind`, that same part also meets the conditions
   * `bind` compiles against it.
   */
  private existsPart(scope: Scope, anchor?: RowTest, positive = true, bind?: (bound: Scope) => string[]): string {
    const row = this.alias('p');
    const predicates = [`${row}.entity_id = e.id`];
    if (scope.partAlias) predicates.push(`${row}.part_uuid = ${scope.partAlias}.part_uuid`);
    if (anchor) {
      predicates.push(...rowPredicates(row, anchor, scope.partTypes, this.params));
      this.addMatcher(anchor, scope, positive);
    } else {
      for (const partType of scope.partTypes) predicates.push(partTypeTest(row, partType, this.params));
    }
    if (bind) predicates.push(...bind({ partTypes: scope.partTypes, partAlias: row }));
    return `exists (select 1 from search_value ${row} where ${predicates.join(' and ')}${perRow(positive)})`;
  }

  private compileEntityIndex(cond: EntityIndexCondition): string {
    // A value that no entity number or UUID can equal (the real QueryParamsDef's value is any string) matches nothing.
    if (cond.name === 'entityId') {
      const operator = NUMERIC_OPERATORS[cond.comparator];
      const value = cond.value.trim();
      if (operator) return ENTITY_ID_PATTERN.test(value) ? `e.id ${operator} ${this.params.add(value, 'bigint')}` : 'false';
      return compareText('e.id::text', cond.comparator, value, this.params);
    }
    const text = cond.value.trim().toLowerCase();
    if (cond.comparator === 'CT_EQ') return UUID_PATTERN.test(text) ? `e.uuid = ${this.params.add(text, 'uuid')}` : 'false';
    return compareText('e.uuid::text', cond.comparator, text, this.params);
  }
}

/** Whether ConditionCompiler.matchSet answers `cond` within `scope`. */
function isMatchSet(cond: Condition, scope: Scope): boolean {
  switch (cond.condType) {
    case 'and':
    case 'or':
      return cond.conds.every((child) => isMatchSet(child, scope));
    case 'part':
      return !cond.onePart && cond.cond !== undefined && isMatchSet(cond.cond, partScope(cond, scope));
    case 'value':
    case 'index': {
      const test = rowTest(cond);
      return test !== undefined && !scope.partAlias && matchSet(test, scope, new Params()) !== undefined;
    }
    default:
      return false;
  }
}

/**
 * Whether every entity of the match set of `cond` (one isMatchSet answers) is read from name_word, where the
 * query's types narrow each read (nameWordEntities): an intersection holding one such set, a union of such sets.
 */
function isTypedSet(cond: Condition, scope: Scope): boolean {
  switch (cond.condType) {
    case 'and':
      return cond.conds.some((child) => isTypedSet(child, scope));
    case 'or':
      return cond.conds.every((child) => isTypedSet(child, scope));
    case 'part':
      return !cond.onePart && cond.cond !== undefined && isTypedSet(cond.cond, partScope(cond, scope));
    case 'value':
    case 'index': {
      const test = rowTest(cond);
      // matchSet reads a name's CT_CONTAINS from name_word: inside one word, or the candidates holding its words.
      return (
        test !== undefined &&
        test.comparator === 'CT_CONTAINS' &&
        test.needle !== undefined &&
        isPlainNameTest(test, scope) &&
        (isInsideOneWord(test.needle) || needleWords(test.needle).length > 0)
      );
    }
    default:
      return false;
  }
}

/** The scope of the conditions inside a plain (not onePart) `part` condition. */
function partScope(cond: Extract<Condition, { condType: 'part' }>, scope: Scope): Scope {
  return { partTypes: cond.partType ? [...scope.partTypes, cond.partType] : scope.partTypes, partAlias: scope.partAlias };
}

type EntityIndexCondition = Extract<Condition, { condType: 'index' }> & { name: 'entityId' | 'entityUuid' };

/** The predicates of a name_word row `alias` for `test` within `scope`; undefined when the word index cannot answer the test. */
function nameWordPredicates(alias: string, test: RowTest, scope: Scope, params: Params): string[] | undefined {
  if (test.comparator !== 'CT_CONTAINS' || test.needle === undefined || !isInsideOneWord(test.needle) || !isPlainNameTest(test, scope))
    return undefined;
  // Compared on the entity's own words (name_word_entity_idx holds them): a test of the word list itself
  // (word = any(…)) let a plan without statistics read every entry of those words for each entity (27 s for
  // `"novák" and not "jan"` on 3,000,000 records).
  const predicates = [`strpos(${alias}.word, ${params.add(test.needle, 'text')}) > 0`];
  if (test.preferred || scope.partTypes.includes('PT_PREF_NAME')) predicates.push(`${alias}.preferred`);
  return predicates;
}

/** The names a word index can answer for: kind name (PT_NAME parts), with no other part type, item type or bound part. */
function isPlainNameTest(test: RowTest, scope: Scope): boolean {
  if (test.kind !== 'name' || scope.partAlias || test.partType !== undefined || test.itemTypes || test.itemSpecs) return false;
  // Names are PT_NAME parts: PT_PREF_NAME narrows to the preferred one; any other part type is answered the old way.
  return scope.partTypes.every((partType) => partType === 'PT_NAME' || partType === 'PT_PREF_NAME');
}

/** Which words of a needle narrow best, first: a whole word before a word's beginning or end, then the longer. */
function narrowingOrder(a: NeedleWord, b: NeedleWord): number {
  const rank = (word: NeedleWord) => (word.match === 'whole' ? 0 : 1);
  return rank(a) - rank(b) || [...b.word].length - [...a.word].length;
}

/** At most this many words of a needle narrow its candidates: each adds a read of its name_word entries. */
const MAX_NARROWING_WORDS = 2;

/**
 * A window whose needle's vocabulary words are more than its width over this many ids reads the window's own words
 * (name_word_entity_idx, in entity order) and tests each, instead of a range of the key per vocabulary word. A range
 * costs a descent of the key, four to five pages, more as the key deepens with the registry; the window's own words
 * about a page per thirty ids (six words an entity, some two hundred entries a leaf page), whatever the registry's size.
 */
const IDS_PER_WORD_RANGE = 64;

/** The test of a name word `nw.word` meeting a needle's word held otherwise than whole. */
function wordMeets({ word, match }: NeedleWord, params: Params): string {
  if (match === 'inside') return `strpos(nw.word, ${params.add(word, 'text')}) > 0`;
  const end = match === 'prefix' ? 'left' : 'right';
  return `${end}(nw.word, ${params.add([...word].length, 'integer')}) = ${params.add(word, 'text')}`;
}

/**
 * The entities holding a name word that is, begins with, ends with or contains `word`, from name_word's primary key
 * (within a window, or from the window's own words: IDS_PER_WORD_RANGE); of the entity types `types` (SQL of a
 * text[] parameter) when given, which the key holds beside each entry.
 */
function nameWordEntities(needleWord: NeedleWord, preferred: boolean, params: Params, window?: IdWindow, types?: string): string {
  const { word, match } = needleWord;
  const escaped = escapeLike(word);
  const onlyPreferred = `${preferred ? ' and nw.preferred' : ''}${types === undefined ? '' : ` and nw.entity_type = any(${types})`}`;
  // The words as one array: name_word's primary key is then read for them alone, whatever the statistics say.
  const words =
    match === 'whole'
      ? `array[${params.add(word, 'text')}]`
      : match === 'prefix'
        ? `array(select v.word from name_vocabulary v where ${beginsWith('v.word', word, params)})`
        : `array(select v.word from name_vocabulary v where v.word like ${params.add(match === 'suffix' ? `%${escaped}` : `%${escaped}%`, 'text')})`;
  if (window === undefined) return `select nw.entity_id from name_word nw where nw.word = any(${words})${onlyPreferred}`;
  // Within a window, each word's entries are one range of the key (word, entity_id): the equality on the word and the
  // bounds on entity_id start and stop the read there. Not as rows, (word, entity_id) >= (…): a btree scan starts from
  // the equality alone and stops only where a row's first column decides, so a window would read every entry of the
  // word. name_word_rank_idx cannot bound entity_id (trigrams come before it), so costs more to the planner.
  const inWindow = `nw.entity_id >= ${window.lo} and nw.entity_id < ${window.hi}`;
  const ranges = (list: string) => `select nw.entity_id from unnest(${list}) as v(word), lateral (
      select nw.entity_id from name_word nw
       where nw.word = v.word and ${inWindow}${onlyPreferred}
    ) nw`;
  if (match === 'whole') return ranges(words);
  // A short needle is in many vocabulary words; a window narrower than their ranges cost reads its own words
  // instead. Each branch's test reads only the window's bounds and the word list (looked up once, OFFSET 0): a
  // one-time filter, decided anew for each window.
  const ownWordsCheaper = `cardinality(l.words) * ${IDS_PER_WORD_RANGE} > ${window.hi} - ${window.lo}`;
  // The types from entity_filters_idx for the matching words alone (OFFSET 0 keeps it a probe each): name_word's own
  // column would be read from its rows, one for every word of the window.
  const ofTypes =
    types === undefined ? '' : ` and exists (select from entity t where t.id = nw.entity_id and t.entity_type = any(${types}) offset 0)`;
  return `select x.entity_id from (select ${words} as words offset 0) l, lateral (
      ${ranges('l.words')} where not (${ownWordsCheaper})
    union all
      select nw.entity_id from name_word nw
       where ${inWindow} and ${wordMeets(needleWord, params)}${preferred ? ' and nw.preferred' : ''}${ofTypes} and ${ownWordsCheaper}
    ) x`;
}

/** The bounds of a window on the entity_id of `alias`, when there is one. */
function withinWindow(alias: string, window: IdWindow | undefined): string {
  return window ? ` and ${alias}.entity_id >= ${window.lo} and ${alias}.entity_id < ${window.hi}` : '';
}

/**
 * The entities meeting a row test, read from an index whose reads follow
 * the matches (Migration20261128000100SearchByMatches): a select of
 * entity_id, with repeats. Undefined for a test no such index answers
 * exactly (an order comparator, a date interval, a text too short for the
 * trigram index, a test without text), which is tested per entity instead.
 *  - names (`DISPLAY_NAME`, `name`, `prefName`, under PT_NAME/PT_PREF_NAME):
 *    CT_CONTAINS of one word through name_word; of several words, the
 *    candidates holding its words (name_word), whose names are compared
 *    with the whole needle; CT_EQ and CT_STARTS_WITH one range of the
 *    names' btree, CT_ENDS_WITH one of the reversed names' (within a
 *    window, CT_STARTS_WITH and CT_ENDS_WITH the candidates holding the
 *    needle's narrowing word, whose names are compared with the needle);
 *  - any other test: the search rows themselves, CT_EQ and CT_STARTS_WITH
 *    by the text_pattern_ops btrees (with the item type first when given),
 *    CT_CONTAINS and CT_ENDS_WITH of three characters or more by trigrams.
 */
function matchSet(test: RowTest, scope: Scope, params: Params, window?: IdWindow, types?: string): string | undefined {
  const { comparator, needle } = test;
  if (needle === undefined || needle === '' || test.dates || scope.partAlias) return undefined;
  if (comparator !== 'CT_EQ' && comparator !== 'CT_STARTS_WITH' && comparator !== 'CT_ENDS_WITH' && comparator !== 'CT_CONTAINS')
    return undefined;
  // Shorter text matched inside values is in most records: it is answered only narrowed (services/search/broad.ts), per entity.
  if ((comparator === 'CT_CONTAINS' || comparator === 'CT_ENDS_WITH') && [...needle].length < MIN_TRIGRAM_NEEDLE) return undefined;
  if (isPlainNameTest(test, scope)) {
    const preferred = test.preferred === true || scope.partTypes.includes('PT_PREF_NAME');
    const onlyPreferred = preferred ? ' and sv.preferred' : '';
    // A range of whole names holds many names, each with its entities in id order: no index reads it in id order.
    // A prefix or an ending is read in a window through its words instead (startingWord, endingWord,
    // candidatesWhoseNames).
    if (window && comparator === 'CT_EQ') return undefined;
    // In a window: the candidates holding the needle's narrowing word, whose names begin or end with the needle.
    const namesAtOneEnd = (end: 'left' | 'right', word: NeedleWord | undefined) =>
      word &&
      candidatesWhoseNames(
        nameWordEntities(word, preferred, params, window, types),
        onlyPreferred,
        `${end}(sv.value_norm, ${params.add([...needle].length, 'integer')}) = ${params.add(needle, 'text')}`,
      );
    switch (comparator) {
      case 'CT_CONTAINS': {
        if (isInsideOneWord(needle)) return nameWordEntities({ word: needle, match: 'inside' }, preferred, params, window, types);
        // Within a window its first word alone: each further word costs a range per vocabulary word per window.
        const words = needleWords(needle)
          .sort(narrowingOrder)
          .slice(0, window ? 1 : MAX_NARROWING_WORDS);
        if (words.length === 0) break;
        const candidates = words.map((word) => nameWordEntities(word, preferred, params, window, types)).join(' intersect ');
        // strpos is what LIKE '%needle%' means, on the candidates' names alone.
        return candidatesWhoseNames(candidates, onlyPreferred, `strpos(sv.value_norm, ${params.add(needle, 'text')}) > 0`);
      }
      case 'CT_EQ':
        return `select sv.entity_id from search_value sv where sv.kind = 'name' and sv.value_norm ~>=~ ${params.add(needle, 'text')} and sv.value_norm ~<=~ ${params.add(needle, 'text')}${onlyPreferred}`;
      case 'CT_STARTS_WITH':
        if (window === undefined)
          return `select sv.entity_id from search_value sv where sv.kind = 'name' and ${beginsWith('sv.value_norm', needle, params)}${onlyPreferred}`;
        // left() where starts_with() would do: the planner turns starts_with() into a range of the prefix index and may
        // read the whole range there (without statistics it did), where the candidates are a few names each.
        return namesAtOneEnd('left', startingWord(needle));
      case 'CT_ENDS_WITH':
        if (window === undefined)
          return `select sv.entity_id from search_value sv where sv.kind = 'name' and ${beginsWith('reverse(sv.value_norm)', [...needle].reverse().join(''), params)}${onlyPreferred}`;
        return namesAtOneEnd('right', endingWord(needle));
    }
  }
  // One value of given item types is one range of search_value_type_idx (item_type, value_norm, entity_id), in id order.
  if (window && (comparator !== 'CT_EQ' || test.itemTypes === undefined)) return undefined;
  return `select sv.entity_id from search_value sv where ${rowPredicates('sv', test, scope.partTypes, params).join(' and ')}${withinWindow('sv', window)}`;
}

/** The candidates (a select of entity ids) with a name meeting `test` (on sv.value_norm): a few names each. */
function candidatesWhoseNames(candidates: string, onlyPreferred: string, test: string): string {
  return `select sv.entity_id from search_value sv where sv.entity_id = any(array(${candidates})) and sv.kind = 'name'${onlyPreferred} and ${test}`;
}

/**
 * The word of a CT_STARTS_WITH needle that narrows its candidates in a window: its longest (a whole one first), as a
 * name beginning with the needle holds it. The needle's first word, unless a separator comes before it, begins the
 * name's first word (`novák` begins `novakova`), and is that word when a separator follows it (`novák,`). Undefined
 * for a needle without words.
 */
function startingWord(needle: string): NeedleWord | undefined {
  const words = needleWords(needle).map((word, index): NeedleWord => {
    if (index > 0 || word.match === 'prefix' || word.match === 'whole') return word;
    return { word: word.word, match: word.match === 'suffix' ? 'whole' : 'prefix' };
  });
  return words.sort(narrowingOrder)[0];
}

/**
 * The word of a CT_ENDS_WITH needle that narrows its candidates in a window: its longest (a whole one first), as a
 * name ending with the needle holds it. The needle's last word, unless a separator follows it, ends the name's last
 * word (`vák` ends `novák`), and is that word when a separator comes before it (`, jan`). Undefined for a needle
 * without words.
 */
function endingWord(needle: string): NeedleWord | undefined {
  const words = needleWords(needle);
  const last = words.length - 1;
  return words
    .map((word, index): NeedleWord => {
      if (index < last || word.match === 'suffix' || word.match === 'whole') return word;
      return { word: word.word, match: word.match === 'prefix' ? 'whole' : 'suffix' };
    })
    .sort(narrowingOrder)[0];
}

/** Characters a needle matched inside values needs for the trigram index (pg_trgm's trigrams). */
const MIN_TRIGRAM_NEEDLE = 3;

/**
 * FULLTEXT matches a record when each word of the text begins a word of
 * one of its names (`jan nov` finds `Novák, Jan`): the entities holding,
 * for every word, a name word beginning with it, from name_word. (Reading
 * the longest word's set and testing the others on each candidate's words
 * instead was slower on 3,000,000 records: 37,000 random probes cost more
 * than reading the common word's entries in key order.)
 */
function fulltextSet(text: string, compiler: ConditionCompiler): string {
  const words = [...new Set(needleWords(text).map((word) => word.word))];
  if (words.length === 0) return 'select null::bigint as entity_id where false';
  if (compiler.types !== undefined) compiler.typedSets += 1;
  return words
    .map((word) => `(${compiler.capped(nameWordEntities({ word, match: 'prefix' }, false, compiler.params, undefined, compiler.types))})`)
    .join(' intersect ');
}

/**
 * The total of a query that is nothing but match sets (conditions, or a
 * FULLTEXT text): the distinct entities of their intersection, without
 * visiting entity (every search row and name word stands for a stored
 * record).
 */
function soleSetCount(sets: readonly string[], otherFilters: readonly string[], values: unknown[]): SqlQuery | undefined {
  if (sets.length === 0 || otherFilters.length > 0) return undefined;
  return { text: `select count(distinct m.entity_id) as total from (${sets.map((set) => `(${set})`).join(' intersect ')}) m`, values };
}

/** True when a filter on entity e reads no column of it but its id. */
function testsOnlyTheId(filter: string): boolean {
  return [...filter.matchAll(/\be\.([a-z_]+)/g)].every((reference) => reference[1] === 'id');
}

/**
 * The total of a query that is nothing but entity types and states (either,
 * both, or neither): the sum of entity_count's rows for them, kept by
 * entity's own triggers (Migration20261127000200EntityCounts), exact in the
 * search's snapshot. Counting the entities instead visits each one's index
 * entry (a quarter of 1,000,000 entities: 35 ms).
 */
function soleTypesStateCount(query: SearchQuery): SqlQuery | undefined {
  if (
    query.cond !== undefined ||
    query.codes !== undefined ||
    query.user !== undefined ||
    query.userUuid !== undefined ||
    query.userName !== undefined ||
    query.userRole !== undefined
  ) {
    return undefined;
  }
  const params = new Params();
  const filters = typeStateFilters(query, params, 'c');
  const where = filters.length > 0 ? ` where ${filters.join(' and ')}` : '';
  return { text: `select coalesce(sum(c.entities), 0) as total from entity_count c${where}`, values: params.values };
}

/**
 * The total of a query that is nothing but a user named by one field in one
 * role (or a role alone): that key's entries of search_user_role's primary
 * key, one per entity, counted without visiting entity (every row stands for
 * a stored record). 100,000 entries: an index-only scan of about 10 ms, where
 * a semi-join with entity probes its primary key once per match.
 */
function soleUserCount(query: SearchQuery, filters: readonly string[]): SqlQuery | undefined {
  // One filter: the user filter (types, states, codes and cond add one each).
  if (filters.length !== 1 || query.userRole === undefined) return undefined;
  const keys = userKeys(query);
  if (keys.length !== 1) return undefined;
  return {
    text: 'select count(*) as total from search_user_role ur where ur.user_key = $1::text and ur.role = $2::text',
    values: [keys[0], query.userRole],
  };
}

/**
 * A negated row test stays a subquery run per entity (OFFSET 0 keeps the
 * planner from turning it into an anti join): as an anti join merged in
 * entity order, a page of 20 under `not` read the whole search_value index
 * when the test matched nothing (past the 3 s timeout on 1,000,000 records),
 * while per entity it is one index probe for each entity of the page; its
 * count visits every entity the other filters leave, within SEARCH_MAX_MATCHES.
 */
function perRow(positive: boolean): string {
  return positive ? '' : ' offset 0';
}

/** The search rows a value condition, or an index held in search_value, looks for; undefined for other conditions. */
function rowTest(cond: Condition): RowTest | undefined {
  if (cond.condType === 'value') {
    const test: RowTest = { kind: 'item', itemTypes: cond.itemTypes, itemSpecs: cond.itemSpecs };
    if (cond.value !== undefined) {
      test.comparator = cond.comparator ?? 'CT_EQ';
      test.needle = normalizeForSearch(cond.value);
      const dates = parseDateInterval(cond.value);
      // A date interval in the client's form `from-to` equals the stored `from/to`; CT_CONTAINS also means containment.
      if (dates && test.comparator === 'CT_EQ') test.needle = normalizeForSearch(unitDateSearchText(dates.from, dates.to));
      if (dates && test.comparator === 'CT_CONTAINS')
        test.dates = { ...dates, from: normalizeForSearch(dates.from), to: normalizeForSearch(dates.to) };
    }
    return test;
  }
  if (cond.condType !== 'index') return undefined;
  const compared = { comparator: cond.comparator, needle: normalizeForSearch(cond.value) };
  switch (cond.name) {
    case 'DISPLAY_NAME':
    case 'name':
      return { kind: 'name', ...compared };
    case 'SHORT_NAME':
      return { kind: 'item', partType: 'PT_NAME', itemTypes: ['NM_MAIN'], ...compared };
    case 'prefName':
      return { kind: 'name', preferred: true, ...compared };
    case 'description':
      return { kind: 'item', partType: 'PT_BODY', itemTypes: ['BRIEF_DESC'], ...compared };
    default:
      return undefined;
  }
}

/**
 * The user filters. `user` alone (v1's only user field, what the known client
 * sends for "author of the change") matches a record the user sent in any of
 * its revisions (revision.user_name) or takes part in (a participant's id):
 * search_user holds exactly those pairs, so this is one semi-join on its
 * primary key (see Migration20261124000070SearchRevisionUsers). Any other
 * combination (a role, a user's UUID or name) asks for a user of the record's
 * current revision: its participants, and its sender with role SENDER, keyed
 * by each field that names them in search_user_role
 * (Migration20261124000090SearchUserRoles). A user alone in one role is paged
 * and counted from those entries (soleUserCount, compileSearch). Without a
 * role, a user matches as a participant or as the sender; given by two
 * fields, each must name a user in the role.
 */
function userFilter(query: SearchQuery, params: Params): string | undefined {
  const { user, userUuid, userName, userRole } = query;
  if (user === undefined && userUuid === undefined && userName === undefined && userRole === undefined) return undefined;
  if (user !== undefined && userRole === undefined && userUuid === undefined && userName === undefined) {
    return `exists (select 1 from search_user su where su.entity_id = e.id and su.user_key = ${params.add(user, 'text')})`;
  }
  const keys = userKeys(query);
  const role =
    userRole === undefined ? `ur.role = any(${params.add(SEARCH_USER_ROLES, 'text[]')})` : `ur.role = ${params.add(userRole, 'text')}`;
  // The user's entities as one array: entity is then read by its primary key in id order, and a page stops after
  // pageSize, however the user's records lie among the others (a semi-join walked entity in id order, expecting them
  // spread evenly: 0.4 s on 100,000 entities for a user whose records came late).
  const [first, ...others] = keys.map(
    (key) => `select ur.entity_id from search_user_role ur where ur.user_key = ${params.add(key, 'text')} and ${role}`,
  );
  // A role alone is held by most records: a page finds them walking entity (an array of them all took 0.5-1 s on 300,000).
  if (keys[0] === '') return `exists (${first} and ur.entity_id = e.id)`;
  // Two fields (a UUID and a name) each name a user in the role: checking that both name one user would read every
  // candidate's record (0.4 s for 10,000 candidates), and a record with two such users is not a case of the documents.
  return [`e.id = any(array(${first}))`, ...others.map((rows) => `exists (${rows} and ur.entity_id = e.id)`)].join(' and ');
}

/** The search_user_role keys a user filter (other than `user` alone) asks for: '' when it names only a role. */
function userKeys(query: SearchQuery): string[] {
  const keys: string[] = [];
  if (query.userUuid !== undefined) keys.push(searchUserKey('uuid', query.userUuid));
  if (query.userName !== undefined) keys.push(searchUserKey('name', query.userName));
  if (query.user !== undefined) keys.push(searchUserKey('id', query.user));
  return keys.length === 0 ? [''] : keys;
}

/** The types and states a query asks for, on the entity_type and state columns of `alias` (entity, entity_count). */
function typeStateFilters(query: SearchQuery, params: Params, alias: string): string[] {
  const filters: string[] = [];
  if (query.types) filters.push(`${alias}.entity_type = any(${params.add(query.types, 'text[]')})`);
  if (query.state) filters.push(`${alias}.state = any(${params.add(query.state, 'text[]')})`);
  return filters;
}

/**
 * The entity-level filters of a query: types, states, participants, codes
 * and the condition tree, and the match sets among its conjuncts (each a
 * select of entity ids, intersected into the array entity is read by).
 */
function entityFilters(query: SearchQuery, compiler: ConditionCompiler, sets: string[]): string[] {
  // The match sets go to `sets`, the rest are filters on entity e.
  const params = compiler.params;
  // The types' parameter is the compiler's: name word sets read with it too.
  const typeFilter = compiler.types === undefined ? undefined : `e.entity_type = any(${compiler.types})`;
  const filters = query.state ? [`e.state = any(${params.add(query.state, 'text[]')})`] : [];
  const users = userFilter(query, params);
  if (users !== undefined) filters.push(users);
  if (query.codes) {
    const ids = query.codes.flatMap((ref) => (ref.entityId !== undefined ? [String(ref.entityId)] : []));
    const uuids = query.codes.flatMap((ref) => (ref.entityId === undefined && ref.entityUuid !== undefined ? [ref.entityUuid] : []));
    filters.push(`(e.id = any(${params.add(ids, 'bigint[]')}) or e.uuid = any(${params.add(uuids, 'uuid[]')}))`);
  }
  if (query.cond) {
    const tested = compiler.compile(query.cond, { partTypes: [] }, true, true, sets);
    if (tested !== 'true') filters.push(tested);
  }
  // A set read from name_word of the types has applied them already.
  return typeFilter === undefined || compiler.typedSets > 0 ? filters : [typeFilter, ...filters];
}

/**
 * EXACT: every entity meeting all filters, by entityId. FULLTEXT: entities
 * each word of whose `query.text` begins a word of one of their names
 * (fulltextSet), that also meet all filters, the best first by their best
 * name (fulltext-page.ts); each row carries that name as lookup. The count
 * of a search that is not a sole index sum reads at most maxMatches + 1
 * entities (`countCapped`); 0: no cap. An EXACT page of match sets that are
 * all read in id order is read in windows (windowed-page.ts), so that it
 * costs the matches up to its end. A FULLTEXT search needs `heldWhole`:
 * the words of its text (fulltextTextWords) some name holds whole
 * (wordsHeldWhole).
 */
export function compileSearch(
  query: SearchQuery,
  paging: Paging,
  searchType: SearchType,
  maxMatches = 0,
  heldWhole?: ReadonlySet<string>,
): CompiledSearch {
  const params = new Params();
  const compiler = new ConditionCompiler(params, maxMatches, undefined, query.types);
  const fulltext = searchType === 'FULLTEXT' ? normalizeForSearch(query.text ?? '') : undefined;
  const sets: string[] = [];
  if (fulltext !== undefined) sets.push(fulltextSet(fulltext, compiler));
  const filters = entityFilters(query, compiler, sets);
  const where = filters.length > 0 ? ` where ${filters.join(' and ')}` : '';
  // The matches, distinct and in id order; each is then one probe of entity's primary key (a subquery per id: the
  // planner cannot turn it into a walk of entity, or test an unsorted array against every entity, whatever the statistics).
  // In id order for the count too: probes in order read entity_filters_idx leaf by leaf (hashed, in no order, a count
  // of 140,722 matches took 1.5 s instead of 0.9).
  const ids =
    sets.length > 0
      ? `(select distinct m.id from unnest(array(${sets.map((set) => `(${set})`).join(' intersect ')})) m(id) order by m.id) ids`
      : '';
  const matched = (columns: string) => `${ids}, ${entityProbe('ids.id', columns, filters)} e`;
  // Filters that test nothing of entity's row but its id (a `not` of a name word, say) are tested on the matched ids:
  // every id a set reads stands for a stored record, so entity need not be visited to count them.
  const onIdsAlone = sets.length > 0 && filters.length > 0 && filters.every(testsOnlyTheId);
  const counted = onIdsAlone ? `${ids}, lateral (select ids.id as id) e where ${filters.join(' and ')}` : matched('1');
  const from = sets.length > 0 ? matched(RESULT_COLUMNS) : `entity e${where}`;
  const countValues = [...params.values];
  const soleUser = searchType === 'EXACT' && sets.length === 0 ? soleUserCount(query, filters) : undefined;
  const soleCount =
    soleSetCount(sets, filters, countValues) ??
    soleUser ??
    (searchType === 'EXACT' && sets.length === 0 ? soleTypesStateCount(query) : undefined);
  const count = soleCount ?? {
    text: `select count(*) as total from (select 1 from ${sets.length > 0 ? counted : `entity e${where}`} limit $${countValues.length + 1}::bigint) c`,
    values: [...countValues, maxMatches > 0 ? maxMatches + 1 : null],
  };
  let page: SqlQuery;
  if (fulltext !== undefined) {
    if (heldWhole === undefined) throw new Error('a FULLTEXT search is compiled with the words of its text some name holds whole');
    page = fulltextPage({ text: fulltext, heldWhole, ids, setCount: sets.length, filters, params, types: compiler.types, paging });
  } else if (soleUser) {
    // The user's entries are in entity order in the key: the page is read there, then its records.
    page = {
      text: `select ${RESULT_COLUMNS} from (select ur.entity_id from search_user_role ur where ur.user_key = $1::text and ur.role = $2::text order by ur.entity_id offset $3::bigint limit $4::bigint) u join entity e on e.id = u.entity_id order by e.id`,
      values: [...soleUser.values, pageOffset(paging), paging.pageSize],
    };
  } else {
    page = (sets.length > 0 ? windowedSearchPage(query, paging, maxMatches) : undefined) ??
      (sets.length === 1 && filters.length === 0 ? firstIdsPage(query, paging) : undefined) ?? {
        text: `select ${RESULT_COLUMNS} from ${from} order by ${sets.length > 0 ? 'ids.id' : 'e.id'} offset ${params.add(pageOffset(paging), 'bigint')} limit ${params.add(paging.pageSize, 'bigint')}`,
        values: params.values,
      };
  }
  return { page, count, countCapped: soleCount === undefined && maxMatches > 0, matchers: fulltext !== undefined ? [] : compiler.matchers };
}

/**
 * The page of an EXACT search whose match sets are all read in id order
 * within a window (name words, one value of given item types), read window
 * by window; undefined when a set is of another form.
 */
function windowedSearchPage(query: SearchQuery, paging: Paging, maxMatches: number): SqlQuery | undefined {
  const params = new Params();
  const compiler = new ConditionCompiler(params, 0, PAGE_WINDOW, query.types);
  const sets: string[] = [];
  let filters: string[];
  try {
    filters = entityFilters(query, compiler, sets);
  } catch (error) {
    if (error instanceof NotWindowed) return undefined;
    throw error;
  }
  const offset = params.add(pageOffset(paging), 'bigint');
  const limit = params.add(paging.pageSize, 'bigint');
  return {
    text: windowedPageSql({
      window: PAGE_WINDOW,
      matches: sets.map((set) => `(${set})`).join(' intersect '),
      filter: filters.length > 0 ? entityProbe('m.id', 'true as passed', filters) : undefined,
      offset,
      limit,
      cap: maxMatches > 0 ? params.add(maxMatches, 'bigint') : undefined,
      page: (id) => `${entityProbe(id, RESULT_COLUMNS, [])} e`,
      columns: RESULT_COLUMNS,
    }),
    values: params.values,
  };
}

/**
 * The page of an EXACT search that is nothing but one match set made of `or` of row tests (a range of names, say,
 * which no index reads in id order): the union's first ids up to the page's end are among each test's own first
 * ids up to it, so each test's matches are read for those alone (a bounded sort, no array of every match).
 * Undefined for a search of another form. Its total is counted, and capped, apart.
 */
function firstIdsPage(query: SearchQuery, paging: Paging): SqlQuery | undefined {
  if (query.cond === undefined || !isUnionOfRowTests(query.cond)) return undefined;
  const params = new Params();
  const compiler = new ConditionCompiler(params, 0);
  const offset = params.add(pageOffset(paging), 'bigint');
  const limit = params.add(paging.pageSize, 'bigint');
  compiler.firstIds = `(${offset} + ${limit})`;
  const sets: string[] = [];
  const filters = entityFilters(query, compiler, sets);
  if (sets.length !== 1 || filters.length > 0) return undefined;
  return {
    text: `select ${RESULT_COLUMNS}
        from (select distinct m.entity_id as id from (${sets[0]}) m order by 1 offset ${offset} limit ${limit}) ids,
             ${entityProbe('ids.id', RESULT_COLUMNS, [])} e
       order by ids.id`,
    values: params.values,
  };
}

/** A condition of row tests under `or` and plain `part` alone: its first ids are among its tests' first ids. */
function isUnionOfRowTests(cond: Condition): boolean {
  switch (cond.condType) {
    case 'or':
      return cond.conds.every(isUnionOfRowTests);
    case 'part':
      return !cond.onePart && cond.cond !== undefined && isUnionOfRowTests(cond.cond);
    case 'value':
    case 'index':
      return rowTest(cond) !== undefined;
    default:
      return false;
  }
}

/**
 * The best matched value of each listed entity: the rows meeting the first
 * matcher (in the order of the conditions) that any row meets, a preferred
 * name before other parts. onePart bindings are not repeated here: the
 * lookup shows a value that met its condition, not the proof of the match.
 */
export function compileLookups(entityIds: readonly number[], matchers: readonly LookupMatcher[]): SqlQuery {
  const params = new Params();
  const ids = params.add(entityIds.map(String), 'bigint[]');
  const cases = matchers.map(
    (matcher, index) => `when ${rowPredicates('sv', matcher.test, matcher.partTypes, params).join(' and ')} then ${index}`,
  );
  return {
    text: `select distinct on (m.entity_id) m.entity_id, m.value, m.part_type, m.matcher from (
        select sv.entity_id, sv.value, sv.part_type, sv.preferred, case ${cases.join(' ')} end as matcher
          from search_value sv where sv.entity_id = any(${ids})
      ) m where m.matcher is not null
      order by m.entity_id, m.matcher, m.preferred desc, m.value`,
    values: params.values,
  };
}
