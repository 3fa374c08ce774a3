import { describe, expect, it } from 'vitest';
import { dateKey, parseDateInterval, unitDateSearchText } from '../../domain/search-values.ts';
import { compileSearch } from '../../db/search/compile.ts';

describe('date intervals in search values', () => {
  it('reads the known client form from-to, the stored form from/to, and one date', () => {
    // ELZA SearchFilterFactory: valueFrom + "-" + valueTo, each ISO_LOCAL_DATE_TIME.
    expect(parseDateInterval('1850-01-01T00:00:00-1850-12-31T23:59:59')).toEqual({
      from: '1850-01-01T00:00:00',
      to: '1850-12-31T23:59:59',
      fromKey: '18500101000000',
      toKey: '18501231235959',
    });
    expect(parseDateInterval('1850-01-01t00:00:00/1850-12-31t23:59:59')).toMatchObject({
      from: '1850-01-01T00:00:00',
      to: '1850-12-31T23:59:59',
    });
    expect(parseDateInterval(' 1850-03-12T00:00:00 ')).toMatchObject({ from: '1850-03-12T00:00:00', to: '1850-03-12T00:00:00' });
    // Years before the common era: the minus sign of the second year follows the separator.
    expect(parseDateInterval('-0050-01-01T00:00:00--0050-12-31T23:59:59')).toMatchObject({
      from: '-0050-01-01T00:00:00',
      to: '-0050-12-31T23:59:59',
    });
    expect(parseDateInterval('-0100-01-01T00:00:00-0100-12-31T23:59:59')).toMatchObject({
      from: '-0100-01-01T00:00:00',
      to: '0100-12-31T23:59:59',
    });
    expect(parseDateInterval('+10000-01-01T00:00:00-+10000-12-31T23:59:59')).toMatchObject({
      from: '+10000-01-01T00:00:00',
      to: '+10000-12-31T23:59:59',
    });
  });

  it('leaves other text alone', () => {
    for (const text of [
      '1850',
      '1850-1900',
      '12.3.1850',
      '1850-01-01',
      '1850-01-01T00:00',
      '1850-01-01T00:00:00Z',
      '1850-01-01T00:00:00 - 1850-12-31T23:59:59',
      'Novák',
    ]) {
      expect(parseDateInterval(text), text).toBeUndefined();
    }
  });

  it('orders instants as time does, where text order does not', () => {
    const instants = [
      '-0100-12-31T23:59:59',
      '-0050-01-01T00:00:00',
      '-0050-12-31T23:59:59',
      '0000-06-01T00:00:00',
      '0050-01-01T00:00:00',
      '1850-03-12T00:00:00',
      '9999-12-31T23:59:59',
      '+10000-01-01T00:00:00',
    ];
    const keys = instants.map(dateKey);
    expect([...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(keys);
    expect(dateKey('1850-03-12t00:00:00')).toBe(dateKey('1850-03-12T00:00:00'));
  });

  it('writes a date value as search_value holds it', () => {
    expect(unitDateSearchText('1850-01-01T00:00:00', '1850-12-31T23:59:59')).toBe('1850-01-01T00:00:00/1850-12-31T23:59:59');
    expect(unitDateSearchText('1850-03-12T00:00:00', '1850-03-12T00:00:00')).toBe('1850-03-12T00:00:00');
  });

  it('compiles CT_CONTAINS of a date interval to a containment test with the keys as parameters, and CT_EQ to the stored form', () => {
    const contains = compileSearch(
      { cond: { condType: 'value', itemTypes: ['CRE_DATE'], comparator: 'CT_CONTAINS', value: '1850-01-01T00:00:00-1850-12-31T23:59:59' } },
      { page: 1, pageSize: 1 },
      'EXACT',
    );
    expect(contains.page.values).toEqual(expect.arrayContaining(['18500101000000', '18501231235959']));
    expect(contains.page.text).not.toContain('1850');
    const equals = compileSearch(
      { cond: { condType: 'value', itemTypes: ['CRE_DATE'], comparator: 'CT_EQ', value: '1850-01-01T00:00:00-1850-12-31T23:59:59' } },
      { page: 1, pageSize: 1 },
      'EXACT',
    );
    expect(equals.page.values).toContain('1850-01-01t00:00:00/1850-12-31t23:59:59');
    const text = compileSearch(
      { cond: { condType: 'value', comparator: 'CT_CONTAINS', value: '1850' } },
      { page: 1, pageSize: 1 },
      'EXACT',
    );
    expect(text.page.text).not.toContain('bigint * 10000000000');
  });
});
