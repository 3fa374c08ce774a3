// The read routing's pure parts (db/read-routing/): WAL positions compare as
// numbers, and a standby's read runs again on the primary only while nothing
// of its answer has been handed on.
import { describe, expect, it } from 'vitest';
import { withFallback } from '../../db/read-routing/fallback.ts';
import { lsnValue } from '../../db/read-routing/lsn.ts';

class Lost extends Error {}
const standbyFailure = (error: unknown) => error instanceof Lost;

interface Repo {
  one(id: number): Promise<string>;
  rows(): AsyncGenerator<number[]>;
}

function repo(side: string, fail: { one?: Error; rowsAfter?: number; rows?: Error }): Repo {
  return {
    async one(id) {
      if (fail.one) throw fail.one;
      return `${side}:${id}`;
    },
    async *rows() {
      for (let page = 0; page < 3; page++) {
        if (fail.rows && page === (fail.rowsAfter ?? 0)) throw fail.rows;
        yield [page, side === 'primary' ? 1 : 0];
      }
    },
  };
}

async function collect(rows: AsyncGenerator<number[]>): Promise<number[][]> {
  const pages: number[][] = [];
  for await (const page of rows) pages.push(page);
  return pages;
}

describe('lsnValue', () => {
  it('orders WAL positions across the 32-bit boundary', () => {
    expect(lsnValue('0/FFFFFFFF') < lsnValue('1/0')).toBe(true);
    expect(lsnValue('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
  });
});

describe('withFallback', () => {
  it('answers from the standby when it answers', async () => {
    let downs = 0;
    const read = withFallback(repo('standby', {}), repo('primary', {}), standbyFailure, () => downs++);
    expect(await read.one(7)).toBe('standby:7');
    expect(await collect(read.rows())).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    expect(downs).toBe(0);
  });

  it('runs a read the standby failed again on the primary, and takes the standby out', async () => {
    let downs = 0;
    const read = withFallback(repo('standby', { one: new Lost(), rows: new Lost() }), repo('primary', {}), standbyFailure, () => downs++);
    expect(await read.one(7)).toBe('primary:7');
    expect(await collect(read.rows())).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(downs).toBe(2);
  });

  it('lets an error of the read itself stand', async () => {
    const read = withFallback(repo('standby', { one: new Error('bad input') }), repo('primary', {}), standbyFailure, () => undefined);
    await expect(read.one(7)).rejects.toThrow('bad input');
  });

  it('does not start a stream again once some of it was handed on, but takes the standby out', async () => {
    let downs = 0;
    const read = withFallback(repo('standby', { rows: new Lost(), rowsAfter: 1 }), repo('primary', {}), standbyFailure, () => downs++);
    const pages: number[][] = [];
    await expect(
      (async () => {
        for await (const page of read.rows()) pages.push(page);
      })(),
    ).rejects.toBeInstanceOf(Lost);
    expect(pages).toEqual([[0, 0]]);
    expect(downs).toBe(1);
  });
});
