import { normalizeForSearch } from '../../domain/text.ts';
import { ServiceError } from '../errors.ts';
import type { Condition, SearchQuery } from '../../domain/search-query.ts';

// A search is refused as too broad, with a 400 that says how to narrow it,
// for one of two reasons, neither of them an estimate:
//  - a text condition that matches inside values (CT_CONTAINS, CT_ENDS_WITH)
//    with fewer than MIN_INFIX_LENGTH characters, on records no type, code
//    or user narrows: the trigram indexes cannot serve it (pg_trgm needs
//    three characters), so every search value would be read, and such text
//    is in most records anyway (checked here, before anything runs);
//  - counting: a condition read from its index matches more than
//    SEARCH_MAX_MATCHES values, or the total passes it (search.ts).

/** Fewest characters of a needle matched inside values: the trigram index needs three. */
const MIN_INFIX_LENGTH = 3;

/** The 400 of a search refused as too broad, with the reason and the way to narrow it. */
export function tooBroad(reason: string, properties: Record<string, string | number> = {}): ServiceError {
  return new ServiceError('BadRequest', `the search is too broad: ${reason}`, undefined, { reason: 'SearchTooBroad', ...properties });
}

/**
 * Refuses a query holding a text condition too short to be looked up (see
 * above), unless entity types, codes or a user narrow the records it is
 * tested on first (the planner then probes each of those records' values).
 */
export function checkNotTooBroad(query: SearchQuery): void {
  if (query.cond === undefined || query.types || query.codes) return;
  if (query.user !== undefined || query.userUuid !== undefined || query.userName !== undefined) return;
  const stack: Condition[] = [query.cond];
  while (stack.length > 0) {
    const cond = stack.pop()!;
    switch (cond.condType) {
      case 'and':
      case 'or':
        stack.push(...cond.conds);
        break;
      case 'not':
        stack.push(cond.cond);
        break;
      case 'part':
        if (cond.cond) stack.push(cond.cond);
        break;
      case 'value':
      case 'index': {
        if (cond.condType === 'index' && (cond.name === 'entityId' || cond.name === 'entityUuid')) break;
        const { comparator, value } = cond;
        if (value === undefined || (comparator !== 'CT_CONTAINS' && comparator !== 'CT_ENDS_WITH')) break;
        const length = [...normalizeForSearch(value)].length;
        if (length < MIN_INFIX_LENGTH) {
          throw tooBroad(
            `${comparator} "${value}" is shorter than ${MIN_INFIX_LENGTH} characters: text that short is in most records and cannot be looked up in the text index; give at least ${MIN_INFIX_LENGTH} characters, or use CT_EQ or CT_STARTS_WITH`,
            { minLength: MIN_INFIX_LENGTH },
          );
        }
        break;
      }
    }
  }
}
