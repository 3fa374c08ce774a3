import type { HighlightPosition } from '../../domain/model.ts';
import { normalizeForSearch } from '../../domain/text.ts';
import type { Comparator } from '../../domain/search-query.ts';

// Where a match lies in the text the client sees. Matching runs on the
// normalised text, whose length can differ from the original: a decomposed
// accent ('a' + U+0301) loses a code unit, runs of white space collapse and
// the ends are trimmed. So the normalised text is rebuilt piece by piece
// together with the original range of each of its code units. Positions are
// UTF-16 code units (JS and Java string indices), the end exclusive.

interface PositionedText {
  text: string;
  /** For each code unit of `text`, where its source starts in the original… */
  start: number[];
  /** …and where it ends (exclusive). */
  end: number[];
}

// A base character with the combining marks that follow it, or stray marks.
const SEGMENTS = /\P{M}\p{M}*|\p{M}+/gsu;
const WHITE_SPACE = /\s/u;

/** normalizeForSearch(original) with the original range of each code unit; undefined when the two cannot be aligned. */
export function normalizeWithPositions(original: string): PositionedText | undefined {
  const units: string[] = [];
  const start: number[] = [];
  const end: number[] = [];
  let pendingSpace: { start: number; end: number } | undefined;
  for (const match of original.matchAll(SEGMENTS)) {
    const segmentStart = match.index;
    const segmentEnd = segmentStart + match[0].length;
    const piece = match[0].toLowerCase().normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');
    for (const unit of piece) {
      if (WHITE_SPACE.test(unit)) {
        // Leading space is dropped; inner runs become one space spanning the whole run.
        if (units.length > 0) pendingSpace = { start: pendingSpace?.start ?? segmentStart, end: segmentEnd };
        continue;
      }
      if (pendingSpace) {
        units.push(' ');
        start.push(pendingSpace.start);
        end.push(pendingSpace.end);
        pendingSpace = undefined;
      }
      for (let index = 0; index < unit.length; index += 1) {
        units.push(unit[index]!);
        start.push(segmentStart);
        end.push(segmentEnd);
      }
    }
  }
  const rebuilt = units.join('');
  const expected = normalizeForSearch(original);
  if (rebuilt === expected) return { text: rebuilt, start, end };
  // Context-dependent case mapping (a final sigma) changes letters, not positions.
  if (rebuilt.length === expected.length) return { text: expected, start, end };
  return undefined;
}

function toOriginal(text: PositionedText, from: number, to: number): HighlightPosition {
  return { start: text.start[from]!, end: text.end[to - 1]! };
}

function occurrences(haystack: string, needle: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  if (needle === '') return found;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    found.push([at, at + needle.length]);
  }
  return found;
}

/**
 * Positions in `value` of what `comparator` matched against the normalised
 * `needle`: every occurrence for CT_CONTAINS, the prefix, the suffix or the
 * whole value for CT_STARTS_WITH, CT_ENDS_WITH and CT_EQ; none for the order
 * comparators, which match a value without pointing into it.
 */
export function comparatorHighlights(value: string, needle: string, comparator: Comparator): HighlightPosition[] {
  const text = normalizeWithPositions(value);
  if (!text || needle === '') return [];
  const length = text.text.length;
  let ranges: Array<[number, number]> = [];
  switch (comparator) {
    case 'CT_EQ':
      if (text.text === needle) ranges = [[0, length]];
      break;
    case 'CT_STARTS_WITH':
      if (text.text.startsWith(needle)) ranges = [[0, needle.length]];
      break;
    case 'CT_ENDS_WITH':
      if (text.text.endsWith(needle)) ranges = [[length - needle.length, length]];
      break;
    case 'CT_CONTAINS':
      ranges = occurrences(text.text, needle);
      break;
    default:
      break;
  }
  return ranges.map(([from, to]) => toOriginal(text, from, to));
}

/** Positions in `value` of each word of a FULLTEXT text found in it, merged where they touch. */
export function wordHighlights(value: string, searchText: string): HighlightPosition[] {
  const text = normalizeWithPositions(value);
  if (!text) return [];
  const words = [...new Set(normalizeForSearch(searchText).split(' '))].filter((word) => word !== '');
  const ranges = words.flatMap((word) => occurrences(text.text, word)).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged: Array<[number, number]> = [];
  for (const [from, to] of ranges) {
    const last = merged.at(-1);
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged.map(([from, to]) => toOriginal(text, from, to));
}
