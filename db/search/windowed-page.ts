// A search page read in windows of entity ids. A match set whose index holds
// its entity ids in order after an equality (name_word's key (word,
// entity_id); search_value_type_idx (item_type, value_norm, entity_id)) reads
// the matches of a range of ids as one short range of that index per word or
// value. The page reads ranges from the lowest id up, each twice as wide as
// the one before, keeping the matches that pass the other filters, until it
// holds the matches up to its own end: a page of a common name stops after a
// few thousand ids, a rare one widens to the whole registry in about twenty
// steps, each a few index descents. Either way it reads the matches up to its
// end (and at most as many again in its last window), not every match, and
// sorts nothing larger than a window's.
//
// One statement: a recursive CTE whose rows are the windows, each carrying
// the ids found so far. Its bounds only grow, so its rows are its own plan's
// order whatever the statistics.

/** A range of entity ids the sets are read within: SQL expressions of its bounds, `lo` ≤ entity_id < `hi`. */
export interface IdWindow {
  lo: string;
  hi: string;
}

/** The window's bounds inside the recursive CTE: the columns of its current row. */
export const PAGE_WINDOW: IdWindow = { lo: 'w.lo', hi: 'w.hi' };

/** Ids in the first window; each next window is twice as wide as the one before. */
const FIRST_WINDOW_IDS = 512;

export interface WindowedPage {
  window: IdWindow;
  /** A select of entity_id (repeats allowed) within `window`: the match sets, intersected. */
  matches: string;
  /** A LATERAL subquery that yields a row when the entity of `m.id` meets the other filters; undefined: none. */
  filter: string | undefined;
  /** SQL of the page's offset and size (parameters). */
  offset: string;
  limit: string;
  /** SQL of SEARCH_MAX_MATCHES (a parameter), or undefined for no cap. */
  cap: string | undefined;
  /** A LATERAL subquery aliased `e` reading the result columns of the entity of id `id`. */
  page: (id: string) => string;
  columns: string;
}

/**
 * Each window's row carries the matches read so far (`scanned`, before the
 * other filters) and the ids that passed them, up to the page's end. The
 * windows stop past SEARCH_MAX_MATCHES matches, and the page is then refused
 * (search_reads_capped(), the same SQLSTATE as search_capped()): a page reads
 * at most the cap's matches, as the total does.
 */
export function windowedPageSql({ window, matches, filter, offset, limit, cap, page, columns }: WindowedPage): string {
  const need = `(${offset} + ${limit})`;
  const passed = filter === undefined ? '' : ` filter (where f.passed)`;
  const filtered = filter === undefined ? '' : ` left join ${filter} f on true`;
  return `with recursive w(lo, hi, scanned, ids) as (
      select 0::bigint, ${FIRST_WINDOW_IDS}::bigint, 0::bigint, '{}'::bigint[]
    union all
      select ${window.hi}, ${window.hi} + (${window.hi} - ${window.lo}) * 2, w.scanned + x.scanned, w.ids || x.found
        from w, lateral (
          select count(*) as scanned,
                 coalesce((array_agg(m.id order by m.id)${passed})[1 : ${need} - cardinality(w.ids)], '{}') as found
            from (select distinct s.entity_id as id from (${matches}) s) m${filtered}
        ) x
       where cardinality(w.ids) < ${need} and ${window.lo} <= (select max(last.id) from entity last)${cap === undefined ? '' : ` and w.scanned <= ${cap}`}
    )
    select ${columns}
      from (select w.scanned, w.ids from w order by w.lo desc limit 1) found,
           unnest(found.ids[${offset} + 1 : ${need}]) with ordinality p(id, n), ${page('p.id')}${
             cap === undefined
               ? ''
               : `
     where search_reads_capped(found.scanned, ${cap})`
           }
     order by p.n`;
}
