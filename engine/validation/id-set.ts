// The xs:ID values of a document validated in slices, with the slice that
// first held each, in 12 bytes an entry (at half load) instead of a Map of
// strings (about 90 bytes an entry): a 1 GiB batch holds some 650,000 IDs.
// Each ID is kept as a 64-bit hash (two independent 32-bit FNV-1a variants,
// each finished with murmur3's mixer). Two different IDs share a hash with a
// probability of about n² / 2^65 for n IDs (1e-8 at 650,000): such a pair in
// different slices would be reported as a repeated ID.

const EMPTY = -1;

function hashes(value: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ value.length;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995) ^ (b >>> 15);
  }
  return [mix(a), mix(b)];
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class IdSet {
  #high = new Uint32Array(1024);
  #low = new Uint32Array(1024);
  #first = new Int32Array(1024).fill(EMPTY);
  #size = 0;

  /** The slice that first held `id`; records `slice` for it when it is new. */
  firstSlice(id: string, slice: number): number | undefined {
    if ((this.#size + 1) * 2 > this.#first.length) this.#grow();
    const [high, low] = hashes(id);
    const found = this.#slot(high, low);
    const first = this.#first[found] as number;
    if (first !== EMPTY) return first;
    this.#high[found] = high;
    this.#low[found] = low;
    this.#first[found] = slice;
    this.#size += 1;
    return undefined;
  }

  #slot(high: number, low: number): number {
    const mask = this.#first.length - 1;
    let slot = low & mask;
    while (this.#first[slot] !== EMPTY && (this.#high[slot] !== high || this.#low[slot] !== low)) slot = (slot + 1) & mask;
    return slot;
  }

  #grow(): void {
    const high = this.#high;
    const low = this.#low;
    const first = this.#first;
    this.#high = new Uint32Array(first.length * 2);
    this.#low = new Uint32Array(first.length * 2);
    this.#first = new Int32Array(first.length * 2).fill(EMPTY);
    for (let i = 0; i < first.length; i++) {
      if (first[i] === EMPTY) continue;
      const slot = this.#slot(high[i] as number, low[i] as number);
      this.#high[slot] = high[i] as number;
      this.#low[slot] = low[i] as number;
      this.#first[slot] = first[i] as number;
    }
  }
}
