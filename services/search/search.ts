import { pageOffset } from '../../domain/paging.ts';
import type { FoundEntity, QueryResult } from '../../domain/model.ts';
import type { CompiledSearch, LookupMatcher } from '../../db/search/compile.ts';
import type { Paging, SearchQuery, SearchType } from '../../domain/search-query.ts';
import { SearchCancelled, SearchTooManyMatches, type SearchRepository, type SearchSnapshot } from '../../db/search/repository.ts';
import { ServiceError } from '../errors.ts';
import { checkNotTooBroad, tooBroad } from './broad.ts';
import { comparatorHighlights, wordHighlights } from './highlights.ts';

/**
 * `text` is this service's own field (the real QueryParamsDef has none): it
 * drives FULLTEXT. A FULLTEXT query without it is evaluated as EXACT (its
 * fields and condition tree decide), and EXACT leaves a `text` aside, so a
 * client that sends the real QueryParamsDef with either searchType is served.
 */
function effectiveSearchType(query: SearchQuery, searchType: SearchType): SearchType {
  return searchType === 'FULLTEXT' && query.text === undefined ? 'EXACT' : searchType;
}

export interface SearchLimits {
  /** Each statement of a search is cancelled after this many milliseconds (SET LOCAL statement_timeout); 0: no limit. */
  statementTimeoutMs: number;
  /**
   * A condition matching more rows than this, or a total above it, is
   * refused as too broad, found by counting: the reads stop at this many + 1
   * (SEARCH_MAX_MATCHES); 0: no cap.
   */
  maxMatches: number;
}

const DEFAULT_SEARCH_LIMITS: SearchLimits = { statementTimeoutMs: 3000, maxMatches: 1_000_000 };

/** One page of a search, and the requested entity types that no record has (a typo, or a code of the registry's data not used yet). */
export interface SearchAnswer extends QueryResult {
  unknownTypes: string[];
}

/**
 * One page of the entities a validated query finds, with the total count.
 * All statements read one snapshot, so the count, the page and its lookups
 * agree even while batches are being applied. A search whose condition or
 * total passes limits.maxMatches is refused as too broad when its reads
 * count past it (services/search/broad.ts); one that runs past the
 * statement timeout (a loaded server, a search no index answers) answers 503.
 */
export async function searchEntities(
  search: SearchRepository,
  query: SearchQuery,
  paging: Paging,
  requestedType: SearchType = 'EXACT',
  limits: SearchLimits = DEFAULT_SEARCH_LIMITS,
): Promise<SearchAnswer> {
  const searchType = effectiveSearchType(query, requestedType);
  checkNotTooBroad(query);
  const compiled = await search.compile(query, paging, searchType, limits.maxMatches);
  try {
    return await search.inSnapshot(limits.statementTimeoutMs, (snapshot) =>
      runSearch(snapshot, query, paging, searchType, compiled, limits),
    );
  } catch (error) {
    if (error instanceof SearchTooManyMatches) throw tooManyMatches(error.cap);
    if (!(error instanceof SearchCancelled)) throw error;
    throw new ServiceError(
      'ServiceUnavailable',
      `the search did not finish within ${limits.statementTimeoutMs} ms and was stopped; send it again later, or narrow it (entity types, states, a longer text)`,
      undefined,
      { reason: 'SearchTimeout', statementTimeoutMs: limits.statementTimeoutMs },
    );
  }
}

async function runSearch(
  snapshot: SearchSnapshot,
  query: SearchQuery,
  paging: Paging,
  searchType: SearchType,
  compiled: CompiledSearch,
  limits: SearchLimits,
): Promise<SearchAnswer> {
  const hits = await snapshot.page(compiled);
  let count = countFromPage(hits.length, paging);
  if (count === undefined) {
    count = await snapshot.count(compiled);
    if (compiled.countCapped && count > limits.maxMatches) throw tooManyMatches(limits.maxMatches);
  }

  const entities = hits.map((hit) => hit.entity);
  if (searchType === 'FULLTEXT') {
    for (const { entity, bestName } of hits) {
      if (bestName)
        entity.lookup = {
          value: bestName.value,
          partType: bestName.partType,
          highlights: wordHighlights(bestName.value, query.text ?? ''),
        };
    }
  } else if (compiled.matchers.length > 0 && entities.length > 0) {
    await addLookups(snapshot, entities, compiled.matchers);
  }
  for (const entity of entities) entity.lookup ??= preferredNameLookup(entity);
  // A type is a code of the registry's data, not of a closed list: one no record has is said, not refused.
  const unknownTypes = query.types ? await snapshot.typesWithoutRecords(query.types) : [];
  return { count, entities, unknownTypes };
}

function tooManyMatches(cap: number) {
  return tooBroad(
    `it matches more than ${cap} records (or a condition of it more than ${cap} values), more than a search counts exactly; narrow it with entity types, states, a user, or a longer text`,
    { maxMatches: cap },
  );
}

/** The total when the page itself shows it: a short page is the last one (an empty first page: none at all). */
function countFromPage(rows: number, paging: Paging): number | undefined {
  if (rows > 0 && rows < paging.pageSize) return pageOffset(paging) + rows;
  if (rows === 0 && paging.page === 1) return 0;
  return undefined;
}

/**
 * The lookup of an entity found by no text (types, states, users, ids): its
 * preferred name. Every entity carries a lookup, because the real clients
 * read lookup/value of each result without checking that it is there.
 */
function preferredNameLookup(entity: FoundEntity): NonNullable<FoundEntity['lookup']> {
  return { value: entity.name === '' ? String(entity.entityId) : entity.name, partType: 'PT_NAME', highlights: [] };
}

async function addLookups(snapshot: SearchSnapshot, entities: FoundEntity[], matchers: readonly LookupMatcher[]): Promise<void> {
  const values = await snapshot.lookups(
    entities.map((entity) => entity.entityId),
    matchers,
  );
  const byEntity = new Map(values.map((found) => [found.entityId, found]));
  for (const entity of entities) {
    const found = byEntity.get(entity.entityId);
    const matcher = found && matchers[found.matcher];
    // An empty value (an enum item met by an order comparator) cannot be shown: the schema's String needs a character.
    if (!found || !matcher || found.value === '') continue;
    entity.lookup = {
      value: found.value,
      partType: found.partType,
      highlights: comparatorHighlights(found.value, matcher.test.needle, matcher.test.comparator),
    };
  }
}
