import { describe, expect, it } from 'vitest';
import { ByteColumn, NumberColumn, StringIndex, TextColumn, Uint32Column, UuidColumn, UuidMap } from '../../engine/batch/columns.ts';

// The compact columns an apply keeps per entity: every value reads back as
// set, across their chunks too (32,768 entries, 1 MiB of text a chunk).

const COUNT = 70_000;

describe('compact columns', () => {
  it('keep numbers and bytes by index, unset slots 0', () => {
    const numbers = new NumberColumn();
    const bytes = new ByteColumn();
    for (let index = 0; index < COUNT; index += 1) {
      expect(numbers.push(index * 3.5 - 1)).toBe(index);
      bytes.push(index % 256);
    }
    numbers.set(COUNT + 10, 2 ** 40);
    expect(numbers.length).toBe(COUNT + 11);
    expect(numbers.get(COUNT + 5)).toBe(0);
    expect(numbers.get(COUNT + 10)).toBe(2 ** 40);
    for (let index = 0; index < COUNT; index += 1) {
      expect(numbers.get(index)).toBe(index * 3.5 - 1);
      expect(bytes.get(index)).toBe(index % 256);
    }
    expect(bytes.get(COUNT + 1)).toBe(0);
  });

  it('keep UUIDs as written: canonical ones as bytes, others verbatim, absent ones absent', () => {
    const uuids = new UuidColumn();
    const written: (string | undefined)[] = [];
    for (let index = 0; index < COUNT; index += 1) {
      const uuid =
        index % 7 === 0
          ? undefined
          : index % 11 === 0
            ? `Not-A-Uuid-${index}`
            : `${index.toString(16).padStart(8, '0')}-0000-4aaa-bfff-${(index * 977).toString(16).padStart(12, '0')}`;
      written.push(uuid);
      expect(uuids.push(uuid)).toBe(index);
    }
    uuids.set(3, undefined);
    written[3] = undefined;
    uuids.set(11, '00000000-0000-4000-8000-00000000000b');
    written[11] = '00000000-0000-4000-8000-00000000000b';
    expect(Array.from({ length: COUNT }, (_, index) => uuids.get(index))).toEqual(written);
  });

  it('keep texts of any characters', () => {
    const texts = new TextColumn();
    const written = Array.from({ length: COUNT }, (_, index) =>
      index % 5 === 0 ? '' : `Žluťoučký kůň ${index} 😀 ${'x'.repeat(index % 40)}`,
    );
    // A text longer than a chunk, in the middle.
    written[COUNT / 2] = 'Ž'.repeat(700_000);
    for (const text of written) texts.push(text);
    expect(texts.length).toBe(COUNT);
    expect(Array.from({ length: COUNT }, (_, index) => texts.get(index))).toEqual(written);
  });

  it('map UUIDs to numbers: canonical ones by their bytes, others as given, in the order first set', () => {
    const map = new UuidMap();
    const uuid = (index: number) =>
      `${((index * 2654435761) % 2 ** 32).toString(16).padStart(8, '0')}-0000-4aaa-bfff-${index.toString(16).padStart(12, '0')}`;
    for (let index = 0; index < COUNT; index += 1) map.set(uuid(index), index * 2);
    map.set('NOT-canonical', 7);
    map.set(uuid(3), 33);
    expect(map.size).toBe(COUNT + 1);
    for (let index = 0; index < COUNT; index += 1) expect(map.get(uuid(index))).toBe(index === 3 ? 33 : index * 2);
    expect(map.get('NOT-canonical')).toBe(7);
    expect(map.has(uuid(COUNT))).toBe(false);
    // Upper case is another key: as a Map of strings would have it.
    expect(map.get(uuid(5).toUpperCase())).toBeUndefined();
    expect(map.keys()).toEqual([...Array.from({ length: COUNT }, (_, index) => uuid(index)), 'NOT-canonical']);
    expect(map.entries()[3]).toEqual([uuid(3), 33]);
  });
  it('StringIndex finds every key by its text and gives it back by index, across chunks and table growth', () => {
    const index = new StringIndex();
    // Over 2 MB of code units (a chunk), non-Latin-1 keys, an empty one and one kept as a string.
    const keys = Array.from({ length: COUNT * 3 }, (_, at) => (at % 7 === 0 ? `ž-${at}-ü` : at === 5 ? 'x'.repeat(5000) : `localId-${at}`));
    keys.push('');
    // One assertion over all keys (an expect a key took over 5 s on a slow machine): the keys that went wrong.
    const wrongWhenAdded = keys.filter((key, at) => index.has(key) || index.add(key) !== at);
    expect(wrongWhenAdded).toEqual([]);
    expect(index.size).toBe(keys.length);
    const wrongWhenRead = keys.filter((key, at) => index.get(key) !== at || index.at(at) !== key);
    expect(wrongWhenRead).toEqual([]);
    expect(index.get('localId-1 ')).toBeUndefined();
    expect(index.get('x'.repeat(4999))).toBeUndefined();
  });

  it('Uint32Column keeps whole numbers up to 2^32 - 1', () => {
    const column = new Uint32Column();
    for (let at = 0; at < COUNT; at += 1) column.push(at * 61_000);
    for (let at = 0; at < COUNT; at += 1) expect(column.get(at)).toBe(at * 61_000);
  });
});
