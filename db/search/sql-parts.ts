// What the search compilers (compile.ts, fulltext-page.ts) build their SQL from.

export interface SqlQuery {
  text: string;
  values: unknown[];
}

/** A statement's parameters: every user value travels as a $n parameter. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown, type: string): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }
}

/** The last character in code-point (text_pattern_ops) order: `x` and `x || LAST_CHARACTER` bound the texts beginning with `x`. */
const LAST_CHARACTER = '\u{10FFFF}';

/**
 * `expression` begins with `prefix`, as a range of a text_pattern_ops btree
 * (which only such an index serves, whatever the planner's statistics),
 * and starts_with() for the exact answer.
 */
export function beginsWith(expression: string, prefix: string, params: Params): string {
  const from = params.add(prefix, 'text');
  return `${expression} ~>=~ ${from} and ${expression} ~<~ ${params.add(prefix + LAST_CHARACTER, 'text')} and starts_with(${expression}, ${from})`;
}

/**
 * entity's row of the id `id` as a LATERAL subquery of `columns`, when it
 * meets `filters`. OFFSET 0 keeps it a probe of one id (no planner can turn it
 * into a walk of entity); the types and states alone are read from
 * entity_filters_idx.
 */
export function entityProbe(id: string, columns: string, filters: readonly string[]): string {
  const also = filters.map((filter) => ` and ${filter}`).join('');
  return `lateral (select ${columns} from entity e where e.id = ${id}${also} offset 0)`;
}

export const RESULT_COLUMNS = 'e.id, e.uuid, e.entity_type, e.preferred_name, e.description';
