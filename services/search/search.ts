import type pg from 'pg';
import { pageOffset } from '../../domain/paging.ts';
import { problem } from '../../api/problems.ts';
import { inTransaction } from '../../db/sql.ts';
import type { FoundEntity, PartType, QueryResult } from '../../domain/model.ts';
import { compileLookups, compileSearch, type LookupMatcher } from './compile.ts';
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

function checkText(query: SearchQuery, searchType: SearchType): void {
  if (searchType === 'FULLTEXT' && query.text === undefined) {
    throw problem(400, 'BadRequest', 'searchType=FULLTEXT needs a text', [{ path: 'body.text', message: 'required with searchType=FULLTEXT' }]);
  }
  if (searchType !== 'FULLTEXT' && query.text !== undefined) {
    throw problem(400, 'BadRequest', 'text is only used with searchType=FULLTEXT', [{ path: 'body.text', message: 'only allowed with searchType=FULLTEXT' }]);
  }
}

/**
 * One page of the entities a validated query finds, with the total count.
 * All statements read one snapshot, so the count, the page and its lookups
 * agree even while batches are being applied.
 */
export async function searchEntities(pool: pg.Pool, query: SearchQuery, paging: Paging, searchType: SearchType = 'EXACT'): Promise<QueryResult> {
  checkText(query, searchType);
  const compiled = compileSearch(query, paging, searchType);
  return inTransaction(pool, async (client) => {
    await client.query('set transaction isolation level repeatable read read only');
    const { rows } = await client.query<ResultRow>(compiled.page);
    const count = countFromPage(rows.length, paging) ?? Number((await client.query<{ total: string }>(compiled.count)).rows[0]?.total ?? 0);

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
