import type pg from 'pg';
import { pageOffset } from '../../domain/paging.ts';
import { inTransaction } from '../../db/sql.ts';
import type { FoundEntity, PartType, QueryResult } from '../../domain/model.ts';
import { ServiceError } from '../errors.ts';
import { checkNotTooBroad, tooBroad } from './broad.ts';
import { compileFulltextProbe, compileLookups, compileSearch, type LookupMatcher, type SqlQuery } from './compile.ts';
import { comparatorHighlights, wordHighlights } from './highlights.ts';
import type { Paging, SearchQuery, SearchType } from './query.ts';

interface ResultRow {
  id: string;
  uuid: string;
  entity_type: string;
  preferred_name: string | null;
  description: string | null;
  lookup_value?: string;
  lookup_part_type?: PartType;
}

interface LookupRow {
  entity_id: string;
  value: string;
  part_type: PartType;
  matcher: number;
}

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
}

export const DEFAULT_SEARCH_LIMITS: SearchLimits = { statementTimeoutMs: 3000, maxCountCost: 50_000, maxFulltextNames: 10_000 };

/** PostgreSQL's query_canceled: the statement timeout (or a cancel request) stopped the statement. */
const QUERY_CANCELED = '57014';

/**
 * One page of the entities a validated query finds, with the total count.
 * All statements read one snapshot, so the count, the page and its lookups
 * agree even while batches are being applied. A search too broad to answer
 * in about a second is refused (services/search/broad.ts); one that runs
 * past the statement timeout anyway (a loaded server) answers 503.
 */
export async function searchEntities(pool: pg.Pool, query: SearchQuery, paging: Paging, requestedType: SearchType = 'EXACT', limits: SearchLimits = DEFAULT_SEARCH_LIMITS): Promise<QueryResult> {
  const searchType = effectiveSearchType(query, requestedType);
  checkNotTooBroad(query);
  const compiled = compileSearch(query, paging, searchType);
  try {
    return await runSearch(pool, query, paging, searchType, compiled, limits);
  } catch (error) {
    if ((error as { code?: unknown }).code !== QUERY_CANCELED) throw error;
    throw new ServiceError(
      'ServiceUnavailable',
      `the search did not finish within ${limits.statementTimeoutMs} ms and was stopped; send it again later, or narrow it (entity types, states, a longer text)`,
      undefined,
      { reason: 'SearchTimeout', statementTimeoutMs: limits.statementTimeoutMs },
    );
  }
}

async function runSearch(pool: pg.Pool, query: SearchQuery, paging: Paging, searchType: SearchType, compiled: ReturnType<typeof compileSearch>, limits: SearchLimits): Promise<QueryResult> {
  return inTransaction(pool, async (client) => {
    await client.query('set transaction isolation level repeatable read read only');
    // A setting of this transaction only: the pooled connection goes back without it.
    if (limits.statementTimeoutMs > 0) await client.query(`set local statement_timeout = ${Math.floor(limits.statementTimeoutMs)}`);
    if (searchType === 'FULLTEXT' && query.text !== undefined) await checkFulltextNames(client, query.text, limits.maxFulltextNames ?? 0);
    const { rows } = await client.query<ResultRow>(compiled.page);
    let count = countFromPage(rows.length, paging);
    if (count === undefined) {
      if (!compiled.countFollowsMatches) await checkCountCost(client, compiled.count, limits.maxCountCost);
      count = Number((await client.query<{ total: string }>(compiled.count)).rows[0]?.total ?? 0);
    }

    const entities = rows.map(foundEntity);
    if (searchType === 'FULLTEXT') {
      rows.forEach((row, index) => {
        if (!row.lookup_value) return;
        entities[index]!.lookup = { value: row.lookup_value, partType: row.lookup_part_type, highlights: wordHighlights(row.lookup_value, query.text ?? '') };
      });
    } else if (compiled.matchers.length > 0 && rows.length > 0) {
      await addLookups(client, entities, compiled.matchers);
    }
    for (const entity of entities) entity.lookup ??= preferredNameLookup(entity);
    return { count, entities };
  });
}

/**
 * Refuses a total the planner expects to cost more than `maxCost`: its
 * estimate (EXPLAIN without ANALYZE: planning only, about a millisecond), not
 * the count itself, decides.
 */
async function checkCountCost(client: pg.PoolClient, count: SqlQuery, maxCost: number): Promise<void> {
  if (maxCost <= 0) return;
  const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: { 'Total Cost': number } }> }>({ text: `explain (format json) ${count.text}`, values: count.values });
  const cost = rows[0]?.['QUERY PLAN'][0]?.Plan['Total Cost'] ?? 0;
  if (cost > maxCost) {
    throw tooBroad(
      `its conditions match too many records to count them exactly (estimated cost ${Math.round(cost)}, limit ${maxCost}); narrow it with entity types, states, a user, or a more specific condition`,
      { estimatedCost: Math.round(cost), maxCost },
    );
  }
}

/** Refuses a FULLTEXT text similar to more than `maxNames` names, by a probe that stops after maxNames + 1. */
async function checkFulltextNames(client: pg.PoolClient, text: string, maxNames: number): Promise<void> {
  if (maxNames <= 0) return;
  const { rows } = await client.query<{ names: string }>(compileFulltextProbe(text, maxNames));
  if (Number(rows[0]?.names ?? 0) > maxNames) {
    throw tooBroad(`the text "${text}" is similar to more than ${maxNames} names, and each would be ranked; give more of the name`, { maxNames });
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

function foundEntity(row: ResultRow): FoundEntity {
  const entity: FoundEntity = { entityId: Number(row.id), entityUuid: row.uuid, entityType: row.entity_type, name: row.preferred_name ?? '' };
  if (row.description !== null) entity.description = row.description;
  return entity;
}

async function addLookups(client: pg.PoolClient, entities: FoundEntity[], matchers: readonly LookupMatcher[]): Promise<void> {
  const { rows } = await client.query<LookupRow>(compileLookups(entities.map((entity) => entity.entityId), matchers));
  const byEntity = new Map(rows.map((row) => [Number(row.entity_id), row]));
  for (const entity of entities) {
    const row = byEntity.get(entity.entityId);
    const matcher = row && matchers[row.matcher];
    // An empty value (an enum item met by an order comparator) cannot be shown: the schema's String needs a character.
    if (!row || !matcher || row.value === '') continue;
    entity.lookup = { value: row.value, partType: row.part_type, highlights: comparatorHighlights(row.value, matcher.test.needle, matcher.test.comparator) };
  }
}
