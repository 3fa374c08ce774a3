// The words of a normalised name, as name_words() in SQL splits them
// (migration Migration20261123000030NameWords): maximal runs of characters
// other than the ASCII separators (every ASCII character but 0-9, A-Z, a-z).
// A needle that holds no separator can only lie inside one word, so
// `CT_CONTAINS needle` on a name is exactly "one of its words contains the
// needle": name_vocabulary finds those words, name_word their entities.

/** ASCII letters and digits, or anything beyond ASCII: what a word is made of. */
const WORD_CHARACTER = /^[0-9A-Za-z\u0080-\u{10FFFF}]$/u;

/** True when `needle` (normalised) lies inside one word of any name that contains it. */
export function isInsideOneWord(needle: string): boolean {
  return needle !== '' && [...needle].every((character) => WORD_CHARACTER.test(character));
}
