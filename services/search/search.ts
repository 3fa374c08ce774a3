import { pageOffset } from '../../domain/paging.ts';
import type { FoundEntity, QueryResult } from '../../domain/model.ts';
import type { CompiledSearch, LookupMatcher } from '../../db/search/compile.ts';
import type { Paging, SearchQuery, SearchType } from '../../domain/search-query.ts';
import { SearchCancelled, type SearchRepository, type SearchSnapshot } from '../../db/search/repository.ts';
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
  /** A search whose exact total the planner estimates above this cost is refused as too broad; 0: no limit. */
  maxCountCost: number;
  /** A FULLTEXT text similar to more names than this is refused as too broad (every similar name is ranked); 0: no limit. */
  maxFulltextNames?: number;
  /**
   * A search whose total is priced above maxCountCost before its page gets
   * this many milliseconds for its page: a short page (its own total) is
   * answered, anything else refused at once; 0: the page runs whole first.
   */
  refusalProbeMs?: number;
}

const DEFAULT_SEARCH_LIMITS: SearchLimits = {
  statementTimeoutMs: 3000,
  maxCountCost: 50_000,
  maxFulltextNames: 10_000,
  refusalProbeMs: 50,
};

/** One page of a search, and the requested entity types that no record has (a typo, or a code of the registry's data not used yet). */
export interface SearchAnswer extends QueryResult {
  unknownTypes: string[];
}

/**
 * One page of the entities a validated query finds, with the total count.
 * All statements read one snapshot, so the count, the page and its lookups
 * agree even while batches are being applied. A search too broad to answer
 * in about a second is refused (services/search/broad.ts); one that runs
 * past the statement timeout anyway (a loaded server) answers 503.
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
  const compiled = search.compile(query, paging, searchType);
  try {
    return await search.inSnapshot(limits.statementTimeoutMs, (snapshot) =>
      runSearch(snapshot, query, paging, searchType, compiled, limits),
    );
  } catch (error) {
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
  if (searchType === 'FULLTEXT' && query.text !== undefined) await checkFulltextNames(snapshot, query.text, limits.maxFulltextNames ?? 0);
  const hits = (await pageUnlessTooBroad(snapshot, compiled, paging, limits)) ?? (await snapshot.page(compiled));
  let count = countFromPage(hits.length, paging);
  if (count === undefined) {
    if (!compiled.countFollowsMatches) await checkCountCost(snapshot, compiled, limits.maxCountCost);
    count = await snapshot.count(compiled);
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

/** Refuses a total the planner expects to cost more than `maxCost`: its estimate, not the count itself, decides. */
async function checkCountCost(snapshot: SearchSnapshot, compiled: CompiledSearch, maxCost: number): Promise<void> {
  if (maxCost <= 0) return;
  const cost = await snapshot.countCost(compiled);
  if (cost > maxCost) throw countTooBroad(cost, maxCost);
}

function countTooBroad(cost: number, maxCost: number) {
  return tooBroad(
    `its conditions match too many records to count them exactly (estimated cost ${Math.round(cost)}, limit ${maxCost}); narrow it with entity types, states, a user, or a more specific condition`,
    { estimatedCost: Math.round(cost), maxCost },
  );
}

/**
 * The refusal decided before the page, so that it costs planning and not the
 * page's work (a page of 20 OR-ed name prefixes took seconds on a million
 * records, only to be refused after it): when the total that a full page
 * would need is priced above maxCountCost, only a short page can be answered,
 * so the page gets refusalProbeMs; a full page, or none in that time, is
 * refused. Undefined: the page is still to be read as usual.
 */
async function pageUnlessTooBroad(snapshot: SearchSnapshot, compiled: CompiledSearch, paging: Paging, limits: SearchLimits) {
  const probeMs = limits.refusalProbeMs ?? 0;
  if (compiled.countFollowsMatches || limits.maxCountCost <= 0 || probeMs <= 0) return undefined;
  const cost = await snapshot.countCostAhead(compiled);
  if (cost === undefined || cost <= limits.maxCountCost) return undefined;
  const hits = await snapshot.pageWithin(compiled, probeMs);
  if (hits === undefined || countFromPage(hits.length, paging) === undefined) throw countTooBroad(cost, limits.maxCountCost);
  return hits;
}

/** Refuses a FULLTEXT text similar to more than `maxNames` names, by a probe that stops after maxNames + 1. */
async function checkFulltextNames(snapshot: SearchSnapshot, text: string, maxNames: number): Promise<void> {
  if (maxNames <= 0) return;
  if ((await snapshot.similarNames(text, maxNames)) > maxNames) {
    throw tooBroad(`the text "${text}" is similar to more than ${maxNames} names, and each would be ranked; give more of the name`, {
      maxNames,
    });
  }
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
