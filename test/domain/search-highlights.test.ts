import { describe, expect, it } from 'vitest';
import { normalizeForSearch } from '../../domain/text.ts';
import { comparatorHighlights, normalizeWithPositions, wordHighlights } from '../../services/search/highlights.ts';

const slices = (value: string, positions: Array<{ start: number; end: number }>) =>
  positions.map(({ start, end }) => value.slice(start, end));

describe('normalizeWithPositions', () => {
  it('equals normalizeForSearch and maps each unit back to the original', () => {
    for (const value of ['Novák, Jan', '  Dvořák,\t Antonín  ', 'Žluťoučký kůň', 'Łódź', 'ΟΔΥΣΣΕΥΣ', 'a\u0301b  c', '😀 Ÿ İstanbul', '']) {
      const positioned = normalizeWithPositions(value);
      expect(positioned?.text).toBe(normalizeForSearch(value));
      expect(positioned!.start).toHaveLength(positioned!.text.length);
    }
  });

  it('spans a decomposed accent and a run of white space', () => {
    const value = 'Nova\u0301k   Jan';
    const positioned = normalizeWithPositions(value)!;
    expect(positioned.text).toBe('novak jan');
    expect(value.slice(positioned.start[3], positioned.end[3])).toBe('a\u0301');
    expect(value.slice(positioned.start[5], positioned.end[5])).toBe('   ');
  });
});

describe('comparatorHighlights', () => {
  it('finds every occurrence for CT_CONTAINS, in original positions', () => {
    const value = '  Anna Nováková-Nová\u0301';
    const found = comparatorHighlights(value, 'nova', 'CT_CONTAINS');
    expect(slices(value, found)).toEqual(['Nová', 'Nová\u0301']);
  });

  it('marks prefix, suffix and whole value', () => {
    expect(comparatorHighlights(' Dvořák ', 'dvo', 'CT_STARTS_WITH')).toEqual([{ start: 1, end: 4 }]);
    expect(comparatorHighlights('Dvořák', 'rak', 'CT_ENDS_WITH')).toEqual([{ start: 3, end: 6 }]);
    expect(comparatorHighlights(' Dvořák ', 'dvorak', 'CT_EQ')).toEqual([{ start: 1, end: 7 }]);
    expect(comparatorHighlights('Dvořák', 'dvorak', 'CT_GT')).toEqual([]);
  });

  it('keeps positions of characters outside the BMP', () => {
    const value = '😀 Novák';
    expect(slices(value, comparatorHighlights(value, 'novak', 'CT_CONTAINS'))).toEqual(['Novák']);
  });
});

describe('wordHighlights', () => {
  it('marks each word of the text and merges overlaps', () => {
    const value = 'Novák, Jan (1850-1905)';
    expect(slices(value, wordHighlights(value, 'jan NOVAK'))).toEqual(['Novák', 'Jan']);
    expect(slices('abcd', wordHighlights('abcd', 'abc bcd'))).toEqual(['abcd']);
  });
});
