import { describe, expect, it } from 'vitest';
import { fulltextTextWords, fulltextWords } from '../../db/search/fulltext-page.ts';
import { normalizeForSearch } from '../../domain/text.ts';

// Which words of a FULLTEXT text a name must hold whole, and which it holds as a word's beginning: the last word,
// which may be still being typed (decision 0209), and any word no name holds whole (decision 0210).

/** Words some name holds whole, as name_vocabulary would answer for a registry of Czech names. */
const VOCABULARY = new Set(['jan', 'jana', 'novak', 'novakova', 'svoboda', 'petr', 'j']);

const words = (text: string, heldWhole: ReadonlySet<string> = VOCABULARY) => fulltextWords(normalizeForSearch(text), heldWhole);

describe('the words FULLTEXT ranks by', () => {
  it('takes the last word as possibly unfinished, the others as whole words', () => {
    expect(words('Jan Nov')).toEqual({ whole: ['jan'], beginnings: ['nov'] });
    expect(words('novák')).toEqual({ whole: [], beginnings: ['novak'] });
    expect(words('Svoboda, Petr')).toEqual({ whole: ['svoboda'], beginnings: ['petr'] });
  });

  it('takes a last word followed by a separator as finished', () => {
    expect(words('novák,')).toEqual({ whole: ['novak'], beginnings: [] });
    expect(words('Novák, Jan (')).toEqual({ whole: ['novak', 'jan'], beginnings: [] });
  });

  it('takes a last word of one or two characters as typed too (`novák j` finds `Novák, Jan`)', () => {
    expect(words('novák j')).toEqual({ whole: ['novak'], beginnings: ['j'] });
    expect(words('novák jo')).toEqual({ whole: ['novak'], beginnings: ['jo'] });
  });

  it('takes a word no name holds whole as a beginning, wherever it stands (`nov jan` finds `Novák, Jan` first)', () => {
    expect(words('nov jan')).toEqual({ whole: [], beginnings: ['nov', 'jan'] });
    expect(words('nov jan,')).toEqual({ whole: ['jan'], beginnings: ['nov'] });
    expect(words('svob novák pe')).toEqual({ whole: ['novak'], beginnings: ['svob', 'pe'] });
    // With no vocabulary (an empty registry), every word is a beginning.
    expect(words('Novák, Jan (', new Set())).toEqual({ whole: [], beginnings: ['novak', 'jan'] });
  });

  it('counts a repeated word once, as a beginning when it is also the last', () => {
    expect(words('nov jan nov')).toEqual({ whole: ['jan'], beginnings: ['nov'] });
    expect(words('jan novák jan')).toEqual({ whole: ['novak'], beginnings: ['jan'] });
    expect(words('jan jan')).toEqual({ whole: [], beginnings: ['jan'] });
  });

  it('asks name_vocabulary about each distinct word, in order', () => {
    expect(fulltextTextWords(normalizeForSearch('Nov jan, NOV'))).toEqual(['nov', 'jan']);
  });

  it('has no words for a text of separators', () => {
    expect(words(', - ')).toEqual({ whole: [], beginnings: [] });
  });
});
