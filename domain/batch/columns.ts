// Compact per-entity columns for what an apply keeps of every entity of a
// batch to its end (docs/performance.md, worker memory): numbers, small codes,
// UUIDs and texts in typed arrays outside V8's heap, instead of an object and
// a few strings per entity. A batch of 300,000 entities keeps several such
// values for each; as objects they were most of the worker's live heap, and
// V8 lets the heap grow in proportion to what is live.

/** Bytes of a UUID. */
export const UUID_BYTES = 16;
/** A UUID as the service writes it: lower-case hex in the canonical 8-4-4-4-12 groups. */
export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const HEX_DIGITS = '0123456789abcdef';
const DASH = 45;

function hexValue(code: number): number {
  return code <= 57 ? code - 48 : code - 87;
}

/** Writes a canonical UUID's 16 bytes at `offset`. */
export function writeUuid(uuid: string, target: Uint8Array, offset: number): void {
  let at = offset;
  for (let index = 0; index < uuid.length; index += 2) {
    if (uuid.charCodeAt(index) === DASH) index += 1;
    target[at++] = (hexValue(uuid.charCodeAt(index)) << 4) | hexValue(uuid.charCodeAt(index + 1));
  }
}

/** The canonical text of the 16 bytes at `offset`, built flat (concatenated, V8 would keep it as a rope of 20 pieces). */
export function readUuid(source: Uint8Array, offset: number): string {
  const codes: number[] = [];
  for (let index = 0; index < UUID_BYTES; index += 1) {
    if (index === 4 || index === 6 || index === 8 || index === 10) codes.push(DASH);
    const byte = source[offset + index]!;
    codes.push(HEX_DIGITS.charCodeAt(byte >> 4), HEX_DIGITS.charCodeAt(byte & 15));
  }
  return String.fromCharCode(...codes);
}

/** A typed array twice as long (at least `needed`), with the old one's values. */
function grown<T extends Uint8Array | Int32Array | Float64Array>(values: T, needed: number, make: (length: number) => T): T {
  if (needed <= values.length) return values;
  const next = make(Math.max(needed, values.length * 2));
  next.set(values);
  return next;
}

/** Numbers (any double) by index; unset slots read 0. */
export class NumberColumn {
  #values = new Float64Array(1024);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(value: number): number {
    this.set(this.#length, value);
    return this.#length - 1;
  }

  get(index: number): number {
    return this.#values[index] ?? 0;
  }

  /** Sets slot `index`, growing the column to it. */
  set(index: number, value: number): void {
    this.#values = grown(this.#values, index + 1, (length) => new Float64Array(length));
    this.#values[index] = value;
    if (index >= this.#length) this.#length = index + 1;
  }
}

/** Bytes (0 to 255) by index; unset slots read 0. */
export class ByteColumn {
  #values = new Uint8Array(1024);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(value: number): number {
    this.set(this.#length, value);
    return this.#length - 1;
  }

  get(index: number): number {
    return this.#values[index] ?? 0;
  }

  set(index: number, value: number): void {
    this.#values = grown(this.#values, index + 1, (length) => new Uint8Array(length));
    this.#values[index] = value;
    if (index >= this.#length) this.#length = index + 1;
  }
}

/**
 * Optional UUIDs by index: a canonical one as its 16 bytes, anything else
 * (never written by this service, kept as given) in a Map.
 */
export class UuidColumn {
  #bytes = new Uint8Array(1024 * UUID_BYTES);
  /** 1: a canonical UUID in #bytes; 2: verbatim. */
  readonly #kinds = new ByteColumn();
  readonly #verbatim = new Map<number, string>();

  get length(): number {
    return this.#kinds.length;
  }

  push(uuid: string | undefined): number {
    const index = this.#kinds.length;
    this.set(index, uuid);
    return index;
  }

  set(index: number, uuid: string | undefined): void {
    this.#verbatim.delete(index);
    if (uuid === undefined) {
      this.#kinds.set(index, 0);
    } else if (CANONICAL_UUID.test(uuid)) {
      this.#bytes = grown(this.#bytes, (index + 1) * UUID_BYTES, (length) => new Uint8Array(length));
      writeUuid(uuid, this.#bytes, index * UUID_BYTES);
      this.#kinds.set(index, 1);
    } else {
      this.#verbatim.set(index, uuid);
      this.#kinds.set(index, 2);
    }
  }

  get(index: number): string | undefined {
    const kind = this.#kinds.get(index);
    return kind === 1 ? readUuid(this.#bytes, index * UUID_BYTES) : kind === 2 ? this.#verbatim.get(index) : undefined;
  }

  /** Whether slot `index` holds a canonical UUID of these 16 bytes. */
  bytesEqual(index: number, bytes: Uint8Array): boolean {
    if (this.#kinds.get(index) !== 1) return false;
    const offset = index * UUID_BYTES;
    for (let at = 0; at < UUID_BYTES; at += 1) if (this.#bytes[offset + at] !== bytes[at]) return false;
    return true;
  }

  /** The hash of slot `index`'s bytes (a canonical UUID's). */
  hash(index: number): number {
    return hashUuid(this.#bytes, index * UUID_BYTES);
  }
}

/** Texts by index, as their UTF-8 bytes one after the other. */
export class TextColumn {
  #bytes = Buffer.alloc(64 * 1024);
  #used = 0;
  /** Where text i ends; it starts where text i - 1 ends. */
  readonly #ends = new NumberColumn();

  get length(): number {
    return this.#ends.length;
  }

  push(text: string): number {
    const needed = this.#used + Buffer.byteLength(text, 'utf8');
    if (needed > this.#bytes.length) {
      const next = Buffer.alloc(Math.max(needed, this.#bytes.length * 2));
      this.#bytes.copy(next, 0, 0, this.#used);
      this.#bytes = next;
    }
    this.#used += this.#bytes.write(text, this.#used, 'utf8');
    return this.#ends.push(this.#used);
  }

  get(index: number): string {
    const start = index === 0 ? 0 : this.#ends.get(index - 1);
    return this.#bytes.toString('utf8', start, this.#ends.get(index));
  }
}

/**
 * A Map from UUIDs to numbers without a string per key: canonical UUIDs as
 * their 16 bytes in an open-addressing table; any other key in a Map. Keys
 * come back in the order they were first set (canonical ones first).
 */
export class UuidMap {
  readonly #keys = new UuidColumn();
  readonly #values = new NumberColumn();
  /** Entry index + 1 by hash slot; 0: empty. */
  #table = new Int32Array(2048);
  readonly #scratch = new Uint8Array(UUID_BYTES);
  readonly #verbatim = new Map<string, number>();

  get size(): number {
    return this.#keys.length + this.#verbatim.size;
  }

  get(uuid: string): number | undefined {
    if (!CANONICAL_UUID.test(uuid)) return this.#verbatim.get(uuid);
    const entry = this.#find(uuid);
    return entry < 0 ? undefined : this.#values.get(entry);
  }

  has(uuid: string): boolean {
    return this.get(uuid) !== undefined;
  }

  set(uuid: string, value: number): void {
    if (!CANONICAL_UUID.test(uuid)) {
      this.#verbatim.set(uuid, value);
      return;
    }
    const found = this.#find(uuid);
    if (found >= 0) {
      this.#values.set(found, value);
      return;
    }
    const entry = this.#keys.push(uuid);
    this.#values.set(entry, value);
    if ((entry + 1) * 2 > this.#table.length) this.#rehash(this.#table.length * 2);
    else this.#place(entry);
  }

  keys(): string[] {
    const keys: string[] = [];
    for (let entry = 0; entry < this.#keys.length; entry += 1) keys.push(this.#keys.get(entry)!);
    return [...keys, ...this.#verbatim.keys()];
  }

  entries(): [string, number][] {
    return this.keys().map((key) => [key, this.get(key)!]);
  }

  /** The entry of a canonical UUID, or -1. */
  #find(uuid: string): number {
    writeUuid(uuid, this.#scratch, 0);
    const mask = this.#table.length - 1;
    for (let slot = hashUuid(this.#scratch, 0) & mask; ; slot = (slot + 1) & mask) {
      const held = this.#table[slot]!;
      if (held === 0) return -1;
      if (this.#keys.bytesEqual(held - 1, this.#scratch)) return held - 1;
    }
  }

  #place(entry: number): void {
    const mask = this.#table.length - 1;
    let slot = this.#keys.hash(entry) & mask;
    while (this.#table[slot] !== 0) slot = (slot + 1) & mask;
    this.#table[slot] = entry + 1;
  }

  #rehash(size: number): void {
    this.#table = new Int32Array(size);
    for (let entry = 0; entry < this.#keys.length; entry += 1) this.#place(entry);
  }
}

/** A 32-bit hash of the 16 bytes at `offset` (FNV-1a). */
function hashUuid(bytes: Uint8Array, offset: number): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < UUID_BYTES; index += 1) hash = Math.imul(hash ^ bytes[offset + index]!, 0x01000193);
  return hash >>> 0;
}
