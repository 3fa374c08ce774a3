import type pg from 'pg';
import { normalizeForSearch } from '../../domain/text.ts';
import { fulltextTextWords } from './fulltext-page.ts';

/**
 * The words of a FULLTEXT text that some name holds whole (name_vocabulary's
 * key, one probe a word). FULLTEXT counts the others, which no name holds
 * whole, as words' beginnings (decision 0210).
 */
export async function wordsHeldWhole(db: pg.Pool | pg.ClientBase, text: string): Promise<Set<string>> {
  const words = fulltextTextWords(normalizeForSearch(text));
  if (words.length === 0) return new Set();
  const { rows } = await db.query<{ word: string }>('select v.word from name_vocabulary v where v.word = any($1::text[])', [words]);
  return new Set(rows.map((row) => row.word));
}
