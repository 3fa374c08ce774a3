// EntityIdMap answers as a Map would, for ids near its anchor and far from it.
import { describe, expect, it } from 'vitest';
import { EntityIdMap } from '../../engine/batch/entity-id-map.ts';

describe('EntityIdMap', () => {
  it('answers like a Map for ids before, inside and past its dense range', () => {
    const map = new EntityIdMap<string>();
    const reference = new Map<number, string>();
    map.anchor(1000);
    const ids = [1000, 1001, 1005, 999, 1, 1000 + EntityIdMap.DENSE_SPAN - 1, 1000 + EntityIdMap.DENSE_SPAN, 5_000_000_000, 1003];
    for (const id of ids.slice(0, 5)) {
      map.set(id, `v${id}`);
      reference.set(id, `v${id}`);
    }
    map.set(1001, 'again');
    reference.set(1001, 'again');
    for (const id of [...ids, 1002, 1004, 0, -5]) {
      expect(map.get(id)).toBe(reference.get(id));
      expect(map.has(id)).toBe(reference.has(id));
    }
  });

  it('takes its range from the first id set when not anchored', () => {
    const map = new EntityIdMap<number>();
    map.set(50, 1);
    map.set(40, 2);
    map.set(51, 3);
    expect([map.get(50), map.get(40), map.get(51), map.get(41)]).toEqual([1, 2, 3, undefined]);
  });
});
