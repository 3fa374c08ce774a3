import { describe, expect, it } from 'vitest';
import { fulltextWords } from '../../db/search/fulltext-page.ts';
import { normalizeForSearch } from '../../domain/text.ts';

// Which words of a FULLTEXT text a name must hold whole, and which may be a word still being typed (decision 0209).

const words = (text: string) => fulltextWords(normalizeForSearch(text));

describe('the words FULLTEXT ranks by', () => {
  it('takes the last word as possibly unfinished, the others as whole words', () => {
    expect(words('Jan Nov')).toEqual({ whole: ['jan'], typed: 'nov' });
    expect(words('novák')).toEqual({ whole: [], typed: 'novak' });
    expect(words('Svoboda, Petr')).toEqual({ whole: ['svoboda'], typed: 'petr' });
  });

  it('takes a last word followed by a separator as finished', () => {
    expect(words('novák,')).toEqual({ whole: ['novak'], typed: undefined });
    expect(words('Novák, Jan (')).toEqual({ whole: ['novak', 'jan'], typed: undefined });
  });

  it('takes a last word of one or two characters as typed too (`novák j` finds `Novák, Jan`)', () => {
    expect(words('novák j')).toEqual({ whole: ['novak'], typed: 'j' });
    expect(words('novák jo')).toEqual({ whole: ['novak'], typed: 'jo' });
  });

  it('counts a repeated word once, typed when it is also the last', () => {
    expect(words('nov jan nov')).toEqual({ whole: ['jan'], typed: 'nov' });
    expect(words('jan jan')).toEqual({ whole: [], typed: 'jan' });
  });

  it('has no words for a text of separators', () => {
    expect(words(', - ')).toEqual({ whole: [], typed: undefined });
  });
});
