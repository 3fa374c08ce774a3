import { describe, expect, it } from 'vitest';
import type { EntityRecord, Part } from '../../domain/model.ts';
import { briefDescription, displayName, normalizeForSearch, preferredName, preferredNamePart } from '../../domain/text.ts';
import { bodyPart, namePart, storedRecord, str } from './batch-fixtures.ts';

describe('normalizeForSearch', () => {
  it('ignores accents, case and repeated whitespace', () => {
    expect(normalizeForSearch('Novák')).toBe(normalizeForSearch('NOVAK'));
    expect(normalizeForSearch('  Dvořák,\t Antonín  ')).toBe('dvorak, antonin');
    expect(normalizeForSearch('Žluťoučký kůň')).toBe('zlutoucky kun');
  });

  it('keeps letters without a decomposition', () => {
    expect(normalizeForSearch('Łódź')).toBe('łodz');
  });
});

describe('displayName', () => {
  it('joins main and minor name with a comma', () => {
    expect(displayName(namePart('p', 'Novák', 'Jan'))).toBe('Novák, Jan');
  });

  it('appends the order and puts other NM_* items in parentheses', () => {
    const part: Part = {
      partUuid: 'p',
      type: 'PT_NAME',
      items: [
        str('NM_SUP_CHRO', '1316-1378'),
        str('NM_MAIN', 'Karel'),
        str('NM_ORDER', 'IV.'),
        str('NM_SUP_GEN', 'král český'),
        { kind: 'enum', type: 'NM_TYPE', spec: 'NT_ACTUAL' },
      ],
    };
    expect(displayName(part)).toBe('Karel IV. (1316-1378, král český)');
  });

  it('falls back to all string items without NM_MAIN', () => {
    const part: Part = {
      partUuid: 'p',
      type: 'PT_NAME',
      items: [str('X_A', 'Alpha'), { kind: 'int', type: 'X_N', value: '3' }, str('X_B', ' Beta ')],
    };
    expect(displayName(part)).toBe('Alpha Beta');
    expect(displayName({ partUuid: 'p', type: 'PT_NAME', items: [] })).toBe('');
  });
});

describe('preferredNamePart and briefDescription', () => {
  const second = namePart('name-2', 'Novak', 'John');
  const record: EntityRecord = storedRecord({ parts: [bodyPart('body-1', 'painter'), namePart('name-1', 'Novák', 'Jan'), second] });

  it('uses the first PT_NAME part unless one is named', () => {
    expect(preferredNamePart(record)?.partUuid).toBe('name-1');
    expect(preferredNamePart({ ...record, preferredNamePart: 'name-2' })).toBe(second);
    expect(preferredName({ ...record, preferredNamePart: 'name-2' })).toBe('Novak, John');
  });

  it('falls back to the first PT_NAME part when the named one is gone', () => {
    expect(preferredNamePart({ ...record, preferredNamePart: 'missing' })?.partUuid).toBe('name-1');
    expect(preferredNamePart({ ...record, parts: [] })).toBeUndefined();
  });

  it('reads BRIEF_DESC from the PT_BODY part', () => {
    expect(briefDescription(record)).toBe('painter');
    expect(briefDescription({ ...record, parts: [] })).toBeUndefined();
  });
});
