import { describe, expect, it } from 'vitest';
import { xmlDateTime } from '../../domain/xml/date-time.ts';

describe('xmlDateTime', () => {
  it('writes whole seconds in UTC with an offset, whatever xs:dateTime came in', () => {
    expect(xmlDateTime('2026-11-23T16:03:02.123Z')).toBe('2026-11-23T16:03:02Z');
    expect(xmlDateTime('2026-11-23T18:03:02+02:00')).toBe('2026-11-23T16:03:02Z');
    expect(xmlDateTime('2026-11-23T16:03:02.999999-01:30')).toBe('2026-11-23T17:33:02Z');
  });

  it('takes a value without an offset as UTC, not as the server zone', () => {
    expect(xmlDateTime('2025-03-01T10:15:00')).toBe('2025-03-01T10:15:00Z');
  });

  it('leaves what it cannot read, and absence, as they are', () => {
    expect(xmlDateTime(undefined)).toBeUndefined();
    expect(xmlDateTime('not a date')).toBe('not a date');
  });
});
