import { describe, expect, it } from 'vitest';
import { METADATA_OPS } from '../../domain/model.ts';

describe('model', () => {
  it('treats issue and participant changes as metadata-only', () => {
    expect(METADATA_OPS.has('addIssue')).toBe(true);
    expect(METADATA_OPS.has('newPart')).toBe(false);
  });
});
