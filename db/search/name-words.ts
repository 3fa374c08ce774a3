// The words of a normalised name, as name_words() in SQL splits them
// (migration Migration20261123000030NameWords): maximal runs of characters
// other than the ASCII separators (every ASCII character but 0-9, A-Z, a-z).
// A needle that holds no separator can only lie inside one word, so
// `CT_CONTAINS needle` on a name is exactly "one of its words contains the
// needle": name_vocabulary finds those words, name_word their entities.
//
// A needle with separators (`novak, jan`, `c17-4242)`) may span words, but
// each of its own words lies in one word of the name, and where the needle
// puts a separator beside a word, so does the name: a word the needle has
// a separator before begins a word of the name, one with a separator after
// it ends one, and one between two separators is a whole word. Every name
// containing `novak, jan` has a word ending in `novak` and one beginning
// with `jan`: those words narrow the candidates (name_word), whose names are
// then compared with the whole needle. The converse does not hold (the two
// words may sit apart, or in two names of one entity), so the comparison
// stays; the narrowing only spares visiting every other name.

/** ASCII letters and digits, or anything beyond ASCII: what a word is made of. */
const WORD_CHARACTER = /^[0-9A-Za-z\u0080-\u{10FFFF}]$/u;

/** True when `needle` (normalised) lies inside one word of any name that contains it. */
export function isInsideOneWord(needle: string): boolean {
  return needle !== '' && [...needle].every((character) => WORD_CHARACTER.test(character));
}

/**
 * A word of a needle and what a word of a matching name must be: the word
 * itself (`whole`: separators on both sides in the needle), begin with it
 * (`prefix`: a separator before it), end with it (`suffix`: a separator
 * after it), or contain it (`inside`: a needle of one word and nothing else).
 */
export interface NeedleWord {
  word: string;
  match: 'whole' | 'prefix' | 'suffix' | 'inside';
}

/** The words of a normalised needle, in order, each with what a name word holding it must be. */
export function needleWords(needle: string): NeedleWord[] {
  const words: NeedleWord[] = [];
  let word = '';
  let separatorBefore = false;
  const close = (separatorAfter: boolean) => {
    if (word === '') return;
    words.push({ word, match: separatorBefore ? (separatorAfter ? 'whole' : 'prefix') : separatorAfter ? 'suffix' : 'inside' });
    word = '';
  };
  for (const character of needle) {
    if (WORD_CHARACTER.test(character)) {
      word += character;
    } else {
      close(true);
      separatorBefore = true;
    }
  }
  close(false);
  return words;
}
