import type { SearchRepository } from '../../db/search/repository.ts';
import type { EntityState, QueryResult } from '../../domain/model.ts';
import type { Paging, SearchQuery } from '../../domain/search-query.ts';
import { searchEntities, type SearchLimits } from './search.ts';

// The search a person runs from the registry's front door (/global): a part
// of a name, within entity types and states. It is the API's search (the
// CLI's --name too): a CT_CONTAINS condition on the DISPLAY_NAME index, with
// the same limits and the same refusals.

export interface NameSearch {
  /** Text some name of the record contains (case and accents aside); empty: any record. */
  name: string;
  types: string[];
  states: EntityState[];
}

export function searchByName(search: SearchRepository, request: NameSearch, paging: Paging, limits: SearchLimits): Promise<QueryResult> {
  const query: SearchQuery = {};
  if (request.types.length > 0) query.types = request.types;
  if (request.states.length > 0) query.state = request.states;
  const name = request.name.trim();
  if (name !== '') query.cond = { condType: 'index', name: 'DISPLAY_NAME', comparator: 'CT_CONTAINS', value: name };
  return searchEntities(search, query, paging, 'EXACT', limits);
}

/** The entity types records have now, for a person to choose from. */
export function entityTypesInUse(search: SearchRepository): Promise<string[]> {
  return search.entityTypes();
}
