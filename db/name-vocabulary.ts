import type pg from 'pg';

/**
 * Adds the words of these normalised names to the name vocabulary, committed
 * at once on a connection of the pool's own, not in the batch's transaction:
 * every batch shares the vocabulary, and a word inserted by an open
 * transaction would hold every other batch inserting it until that commit.
 * A word no entity holds yet matches nothing, so a word added early, or by a
 * batch that then rolls back, is harmless. Sorted, so two concurrent inserts
 * take the words' index entries in one order.
 */
export async function addNameWords(pool: pg.Pool, valuesNorm: readonly string[]): Promise<void> {
  if (valuesNorm.length === 0) return;
  await pool.query(
    `insert into name_vocabulary (word)
       select distinct w from unnest($1::text[]) v, name_words(v) w order by 1
     on conflict do nothing`,
    [valuesNorm],
  );
}
