import type pg from 'pg';
import type { FoundEntity, PartType } from '../../domain/model.ts';
import { inTransaction } from '../sql.ts';
import { compileFulltextProbe, compileLookups, compileSearch, type CompiledSearch, type LookupMatcher, type SqlQuery } from './compile.ts';
import type { Paging, SearchQuery, SearchType } from '../../domain/search-query.ts';

/** The entity search: compiled to SQL here, run over one snapshot of the search tables. */
export interface SearchRepository {
  /** The statements of one search: its page, its total and the matchers of its lookups. */
  compile(query: SearchQuery, paging: Paging, searchType: SearchType): CompiledSearch;
  /**
   * Runs `read` over one read-only snapshot (repeatable read), so the count,
   * the page and its lookups agree even while batches are being applied.
   * Each statement is cancelled after `statementTimeoutMs` (0: no limit),
   * and the search then fails with SearchCancelled.
   */
  inSnapshot<T>(statementTimeoutMs: number, read: (snapshot: SearchSnapshot) => Promise<T>): Promise<T>;
  /** The entity types some record has now, in order: from the counts by type and state (entity_count), a few rows. */
  entityTypes(): Promise<string[]>;
}

export interface SearchSnapshot {
  /** How many names (at most `cap` + 1) a FULLTEXT text is similar to: a probe that stops there. */
  similarNames(text: string, cap: number): Promise<number>;
  page(search: CompiledSearch): Promise<SearchHit[]>;
  /** The page, stopped after `timeoutMs` (undefined then): the snapshot goes on as before. */
  pageWithin(search: CompiledSearch, timeoutMs: number): Promise<SearchHit[] | undefined>;
  /**
   * Before the page: the planner's estimate of the total that countCost will
   * price after a full page, or undefined when the page carries its total.
   */
  countCostAhead(search: CompiledSearch): Promise<number | undefined>;
  /** The planner's estimate of what the exact total costs (EXPLAIN without ANALYZE: planning only, about a millisecond). */
  countCost(search: CompiledSearch): Promise<number>;
  count(search: CompiledSearch): Promise<number>;
  /**
   * The entity types of `types` that no record has, in the order given:
   * entity_count's rows (a few hundred at most, kept by entity's triggers),
   * not the entities, so it costs the same whatever the registry holds.
   */
  typesWithoutRecords(types: readonly string[]): Promise<string[]>;
  /** The best matched value of each listed entity, by the first of `matchers` (in the order of the conditions) any of its rows meets. */
  lookups(entityIds: readonly number[], matchers: readonly LookupMatcher[]): Promise<MatchedValue[]>;
}

interface SearchHit {
  entity: FoundEntity;
  /** FULLTEXT: the name most similar to the text. */
  bestName?: { value: string; partType?: PartType };
}

interface MatchedValue {
  entityId: number;
  value: string;
  partType: PartType;
  /** Index of the matcher the value met. */
  matcher: number;
}

/** A statement of a search stopped by its statement timeout (or a cancel request). */
export class SearchCancelled extends Error {}

/** PostgreSQL's query_canceled. */
const QUERY_CANCELED = '57014';

interface ResultRow {
  id: string;
  uuid: string;
  entity_type: string;
  preferred_name: string | null;
  description: string | null;
  lookup_value?: string;
  lookup_part_type?: PartType;
  /** CompiledSearch.pageCarriesTotal: the total, on every row. */
  total?: string;
}

interface LookupRow {
  entity_id: string;
  value: string;
  part_type: PartType;
  matcher: number;
}

export function searchRepository(pool: pg.Pool): SearchRepository {
  return {
    compile: compileSearch,
    async entityTypes() {
      const { rows } = await pool.query<{ entity_type: string }>(
        'select entity_type from entity_count group by entity_type having sum(entities) > 0 order by entity_type',
      );
      return rows.map((row) => row.entity_type);
    },
    async inSnapshot(statementTimeoutMs, read) {
      try {
        return await inTransaction(pool, async (client) => {
          // No JIT: a search is milliseconds of work, and compiling a plan the planner prices above 100,000 took 120 ms.
          await client.query('set transaction isolation level repeatable read read only; set local jit = off');
          // A setting of this transaction only: the pooled connection goes back without it.
          if (statementTimeoutMs > 0) await client.query(`set local statement_timeout = ${Math.floor(statementTimeoutMs)}`);
          return read(snapshotOn(client, statementTimeoutMs));
        });
      } catch (error) {
        if ((error as { code?: unknown }).code === QUERY_CANCELED)
          throw new SearchCancelled('the search was cancelled by its statement timeout', { cause: error });
        throw error;
      }
    },
  };
}

/**
 * A narrowed search (CompiledSearch.plain) is answered narrowed when the
 * planner expects its plain count to cost at most this: a needle selective
 * by its trigrams (`novák, jan`: about 700), whose words are then selective
 * too. Above it (`ing., 1`: 127,000), the needle's words are common, reading
 * their name_word entries would cost more than the plain search (9 s for
 * `ing., 1` on 1,000,000 entities), and the plain search is answered, and
 * priced, as before.
 */
const NARROWING_MAX_PLAIN_COST = 10_000;

/** Which form of a search a snapshot answered, with what its page carried and the plain count's estimate. */
interface Answered {
  search: CompiledSearch;
  total?: number;
  plainCost?: number;
}

function snapshotOn(client: pg.PoolClient, statementTimeoutMs: number): SearchSnapshot {
  const answered = new WeakMap<CompiledSearch, Answered>();
  const answer = async (search: CompiledSearch): Promise<Answered> => {
    let chosen = answered.get(search);
    if (chosen === undefined) {
      const plainCost = search.plain && (await explainedCost(client, search.plain.count));
      chosen =
        search.plain && plainCost !== undefined && plainCost > NARROWING_MAX_PLAIN_COST
          ? { search: search.plain, plainCost }
          : { search, plainCost };
      answered.set(search, chosen);
    }
    return chosen;
  };
  const page = async (search: CompiledSearch) => {
    const chosen = await answer(search);
    const { rows } = await client.query<ResultRow>(chosen.search.page);
    // The total the page carried (CompiledSearch.pageCarriesTotal): the count of this snapshot.
    if (chosen.search.pageCarriesTotal && rows[0]?.total !== undefined) chosen.total = Number(rows[0].total);
    return rows.map(searchHit);
  };
  return {
    async similarNames(text, cap) {
      const { rows } = await client.query<{ names: string }>(compileFulltextProbe(text, cap));
      return Number(rows[0]?.names ?? 0);
    },
    page,
    async pageWithin(search, timeoutMs) {
      await answer(search);
      // A savepoint: the cancelled statement and its shorter timeout are rolled back, the snapshot stays.
      await client.query(`savepoint page_within; set local statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
      try {
        const hits = await page(search);
        await client.query(`release savepoint page_within; set local statement_timeout = ${Math.max(0, Math.floor(statementTimeoutMs))}`);
        return hits;
      } catch (error) {
        if ((error as { code?: unknown }).code !== QUERY_CANCELED) throw error;
        await client.query('rollback to savepoint page_within');
        return undefined;
      }
    },
    async countCostAhead(search) {
      const chosen = await answer(search);
      if (chosen.search.pageCarriesTotal) return undefined;
      if (chosen.search === search.plain && chosen.plainCost !== undefined) return chosen.plainCost;
      return explainedCost(client, chosen.search.count);
    },
    async countCost(search) {
      const chosen = await answer(search);
      if (chosen.total !== undefined) return 0;
      if (chosen.search === search.plain && chosen.plainCost !== undefined) return chosen.plainCost;
      return explainedCost(client, chosen.search.count);
    },
    async count(search) {
      const chosen = await answer(search);
      if (chosen.total !== undefined) return chosen.total;
      const { rows } = await client.query<{ total: string }>(chosen.search.count);
      return Number(rows[0]?.total ?? 0);
    },
    async typesWithoutRecords(types) {
      const { rows } = await client.query<{ type: string }>(
        `select t.type from unnest($1::text[]) with ordinality t(type, position)
           left join (select entity_type, sum(entities) as entities from entity_count where entity_type = any($1::text[]) group by entity_type) c
             on c.entity_type = t.type
          where coalesce(c.entities, 0) = 0
          order by t.position`,
        [types],
      );
      return rows.map((row) => row.type);
    },
    async lookups(entityIds, matchers) {
      const { rows } = await client.query<LookupRow>(compileLookups(entityIds, matchers));
      return rows.map((row) => ({ entityId: Number(row.entity_id), value: row.value, partType: row.part_type, matcher: row.matcher }));
    },
  };
}

async function explainedCost(client: pg.PoolClient, query: SqlQuery): Promise<number> {
  const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: { 'Total Cost': number } }> }>({
    text: `explain (format json) ${query.text}`,
    values: query.values,
  });
  return rows[0]?.['QUERY PLAN'][0]?.Plan['Total Cost'] ?? 0;
}

function searchHit(row: ResultRow): SearchHit {
  const entity: FoundEntity = {
    entityId: Number(row.id),
    entityUuid: row.uuid,
    entityType: row.entity_type,
    name: row.preferred_name ?? '',
  };
  if (row.description !== null) entity.description = row.description;
  return row.lookup_value ? { entity, bestName: { value: row.lookup_value, partType: row.lookup_part_type } } : { entity };
}
