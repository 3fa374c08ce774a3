// The registry's unit dates (an interval, each end possibly estimated) as
// EAC-CPF dates: one `date` when both ends are the same instant, else a
// `dateRange`. The stored values are ISO 8601 and go to `standardDate` as
// they are; an estimated end is `certainty="approximate"`.

import type { Item } from '../model.ts';
import type { Markup } from '../xml/markup.ts';

export type UnitDate = Extract<Item, { kind: 'unitDate' }>;

const certainty = (estimate: boolean | undefined) => (estimate === true ? 'approximate' : undefined);

/** `date` or `dateRange` of one unit date, its item type as localType. */
export function writeDate(out: Markup, date: UnitDate): void {
  if (date.from === date.to) {
    out.leaf('date', date.from, [
      ['localType', date.type],
      ['standardDate', date.from],
      ['certainty', certainty(date.fromEstimate ?? date.toEstimate)],
    ]);
    return;
  }
  out
    .open('dateRange', [['localType', date.type]])
    .leaf('fromDate', date.from, [
      ['standardDate', date.from],
      ['certainty', certainty(date.fromEstimate)],
    ])
    .leaf('toDate', date.to, [
      ['standardDate', date.to],
      ['certainty', certainty(date.toEstimate)],
    ])
    .close('dateRange');
}

/**
 * Dates of existence: from the creation's date (its interval's start, no
 * later than its end) to the extinction's (its end, no earlier than its
 * start); either may be missing, not both.
 */
export function writeExistence(out: Markup, creation: UnitDate | undefined, extinction: UnitDate | undefined): void {
  out.open('existDates').open('dateRange');
  if (creation !== undefined) {
    out.leaf('fromDate', creation.from, [
      ['localType', creation.type],
      ['certainty', certainty(creation.fromEstimate)],
      ['notAfter', creation.to === creation.from ? undefined : creation.to],
      ['standardDate', creation.from],
    ]);
  }
  if (extinction !== undefined) {
    out.leaf('toDate', extinction.to, [
      ['localType', extinction.type],
      ['certainty', certainty(extinction.toEstimate)],
      ['notBefore', extinction.to === extinction.from ? undefined : extinction.from],
      ['standardDate', extinction.to],
    ]);
  }
  out.close('dateRange').close('existDates');
}
