import type pg from 'pg';
import type { FoundEntity, PartType } from '../../domain/model.ts';
import { inTransaction } from '../sql.ts';
import { compileLookups, compileSearch, type CompiledSearch, type LookupMatcher } from './compile.ts';
import type { Paging, SearchQuery, SearchType } from '../../domain/search-query.ts';
import { wordsHeldWhole } from './words-held-whole.ts';

/** The entity search: compiled to SQL here, run over one snapshot of the search tables. */
export interface SearchRepository {
  /**
   * The statements of one search: its page, its total and the matchers of
   * its lookups. Each condition's index reads, and the count, stop past
   * `maxMatches` rows (0: no cap): the search then fails with SearchTooManyMatches.
   * A FULLTEXT search first asks name_vocabulary which of its words a name
   * holds whole (wordsHeldWhole): its ranking depends on it.
   */
  compile(query: SearchQuery, paging: Paging, searchType: SearchType, maxMatches: number): Promise<CompiledSearch>;
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
  page(search: CompiledSearch): Promise<SearchHit[]>;
  /** The exact total; for a CompiledSearch.countCapped count, at most the cap + 1. */
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

/** A condition of a search matched more rows than the cap the service reads (search_capped()). */
export class SearchTooManyMatches extends Error {
  readonly cap: number;
  constructor(cap: number, options?: ErrorOptions) {
    super(`a condition of the search matches more than ${cap} rows`, options);
    this.cap = cap;
  }
}

/** search_capped()'s SQLSTATE (Migration20261128000100SearchByMatches): its detail is the cap. */
const TOO_MANY_MATCHES = '54E01';

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
}

interface LookupRow {
  entity_id: string;
  value: string;
  part_type: PartType;
  matcher: number;
}

export function searchRepository(pool: pg.Pool): SearchRepository {
  return {
    async compile(query, paging, searchType, maxMatches) {
      const heldWhole = searchType === 'FULLTEXT' ? await wordsHeldWhole(pool, query.text ?? '') : undefined;
      return compileSearch(query, paging, searchType, maxMatches, heldWhole);
    },
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
          return read(snapshotOn(client));
        });
      } catch (error) {
        const { code, detail } = error as { code?: unknown; detail?: unknown };
        if (code === QUERY_CANCELED) throw new SearchCancelled('the search was cancelled by its statement timeout', { cause: error });
        if (code === TOO_MANY_MATCHES) throw new SearchTooManyMatches(Number(detail), { cause: error });
        throw error;
      }
    },
  };
}

function snapshotOn(client: pg.PoolClient): SearchSnapshot {
  return {
    async page(search) {
      const { rows } = await client.query<ResultRow>(search.page);
      return rows.map(searchHit);
    },
    async count(search) {
      const { rows } = await client.query<{ total: string }>(search.count);
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
