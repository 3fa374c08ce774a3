// Compact per-entity columns for what an apply keeps of every entity of a
// batch to its end (docs/decisions/0019): numbers, small codes,
// UUIDs and texts in typed arrays outside V8's heap, instead of an object and
// a few strings per entity. A batch of 300,000 entities keeps several such
// values for each; as objects they were most of the worker's live heap, and
// V8 lets the heap grow in proportion to what is live.

/** Bytes of a UUID. */
const UUID_BYTES = 16;
/** A UUID as the service writes it: lower-case hex in the canonical 8-4-4-4-12 groups. */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const HEX_DIGITS = '0123456789abcdef';
const DASH = 45;

function hexValue(code: number): number {
  return code <= 57 ? code - 48 : code - 87;
}

/** Writes a canonical UUID's 16 bytes at `offset`. */
function writeUuid(uuid: string, target: Uint8Array, offset: number): void {
  let at = offset;
  for (let index = 0; index < uuid.length; index += 2) {
    if (uuid.charCodeAt(index) === DASH) index += 1;
    target[at++] = (hexValue(uuid.charCodeAt(index)) << 4) | hexValue(uuid.charCodeAt(index + 1));
  }
}

/** The canonical text of the 16 bytes at `offset`, built flat (concatenated, V8 would keep it as a rope of 20 pieces). */
function readUuid(source: Uint8Array, offset: number): string {
  const codes: number[] = [];
  for (let index = 0; index < UUID_BYTES; index += 1) {
    if (index === 4 || index === 6 || index === 8 || index === 10) codes.push(DASH);
    const byte = source[offset + index]!;
    codes.push(HEX_DIGITS.charCodeAt(byte >> 4), HEX_DIGITS.charCodeAt(byte & 15));
  }
  return String.fromCharCode(...codes);
}

/**
 * Entries per chunk of a column (log 2). A column grows a chunk at a time:
 * never copied, never more than one chunk ahead of what it holds (a column
 * that doubled held its old and new arrays at once, and up to twice what it
 * needed).
 */
const CHUNK_SHIFT = 15;
const CHUNK_ENTRIES = 1 << CHUNK_SHIFT;
const CHUNK_MASK = CHUNK_ENTRIES - 1;

/** The chunk of `chunks` holding entry `index`, made (with those before it) when missing. */
function chunkFor<T>(chunks: T[], index: number, make: () => T): T {
  const at = index >>> CHUNK_SHIFT;
  while (chunks.length <= at) chunks.push(make());
  return chunks[at]!;
}

/** Numbers by index in chunks of one typed array kind; unset slots read 0. */
class TypedColumn<A extends Float64Array | Uint32Array | Uint8Array> {
  readonly #chunks: A[] = [];
  readonly #make: () => A;
  #length = 0;

  constructor(make: () => A) {
    this.#make = make;
  }

  get length(): number {
    return this.#length;
  }

  push(value: number): number {
    this.set(this.#length, value);
    return this.#length - 1;
  }

  get(index: number): number {
    return this.#chunks[index >>> CHUNK_SHIFT]?.[index & CHUNK_MASK] ?? 0;
  }

  /** Sets slot `index`, growing the column to it. */
  set(index: number, value: number): void {
    chunkFor(this.#chunks, index, this.#make)[index & CHUNK_MASK] = value;
    if (index >= this.#length) this.#length = index + 1;
  }
}

/** Numbers (any double) by index; unset slots read 0. */
export class NumberColumn extends TypedColumn<Float64Array> {
  constructor() {
    super(() => new Float64Array(CHUNK_ENTRIES));
  }
}

/** Whole numbers from 0 to 2^32 - 1 by index; unset slots read 0. */
export class Uint32Column extends TypedColumn<Uint32Array> {
  constructor() {
    super(() => new Uint32Array(CHUNK_ENTRIES));
  }
}

/** Bytes (0 to 255) by index; unset slots read 0. */
export class ByteColumn extends TypedColumn<Uint8Array> {
  constructor() {
    super(() => new Uint8Array(CHUNK_ENTRIES));
  }
}

/**
 * Optional UUIDs by index: a canonical one as its 16 bytes, anything else
 * (never written by this service, kept as given) in a Map.
 */
export class UuidColumn {
  readonly #chunks: Uint8Array[] = [];
  /** 1: a canonical UUID in #chunks; 2: verbatim. */
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
      writeUuid(
        uuid,
        chunkFor(this.#chunks, index, () => new Uint8Array(CHUNK_ENTRIES * UUID_BYTES)),
        (index & CHUNK_MASK) * UUID_BYTES,
      );
      this.#kinds.set(index, 1);
    } else {
      this.#verbatim.set(index, uuid);
      this.#kinds.set(index, 2);
    }
  }

  get(index: number): string | undefined {
    const kind = this.#kinds.get(index);
    return kind === 1
      ? readUuid(this.#chunks[index >>> CHUNK_SHIFT]!, (index & CHUNK_MASK) * UUID_BYTES)
      : kind === 2
        ? this.#verbatim.get(index)
        : undefined;
  }

  /** Whether slot `index` holds a canonical UUID of these 16 bytes. */
  bytesEqual(index: number, bytes: Uint8Array): boolean {
    if (this.#kinds.get(index) !== 1) return false;
    const chunk = this.#chunks[index >>> CHUNK_SHIFT]!;
    const offset = (index & CHUNK_MASK) * UUID_BYTES;
    for (let at = 0; at < UUID_BYTES; at += 1) if (chunk[offset + at] !== bytes[at]) return false;
    return true;
  }

  /** The hash of slot `index`'s bytes (a canonical UUID's). */
  hash(index: number): number {
    return hashUuid(this.#chunks[index >>> CHUNK_SHIFT]!, (index & CHUNK_MASK) * UUID_BYTES);
  }
}

/** Bytes of a chunk of TextColumn (a longer text takes a chunk of its own size). */
const TEXT_CHUNK_BYTES = 1 << 20;

/** Texts by index, as their UTF-8 bytes one after the other, in chunks of TEXT_CHUNK_BYTES never copied. */
export class TextColumn {
  readonly #chunks: Buffer[] = [];
  /** Bytes used of the last chunk. */
  #used = 0;
  /** Text i: its chunk, where it starts and ends in it. */
  readonly #chunkOf = new NumberColumn();
  readonly #starts = new NumberColumn();
  readonly #ends = new NumberColumn();

  get length(): number {
    return this.#ends.length;
  }

  push(text: string): number {
    const bytes = Buffer.byteLength(text, 'utf8');
    let chunk = this.#chunks.at(-1);
    if (chunk === undefined || this.#used + bytes > chunk.length) {
      chunk = Buffer.alloc(Math.max(TEXT_CHUNK_BYTES, bytes));
      this.#chunks.push(chunk);
      this.#used = 0;
    }
    const index = this.#ends.length;
    this.#chunkOf.set(index, this.#chunks.length - 1);
    this.#starts.set(index, this.#used);
    this.#used += chunk.write(text, this.#used, 'utf8');
    return this.#ends.push(this.#used);
  }

  get(index: number): string {
    return this.#chunks[this.#chunkOf.get(index)]!.toString('utf8', this.#starts.get(index), this.#ends.get(index));
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

/** UTF-16 code units of a chunk of StringIndex (log 2): 2 MB. */
const UNIT_CHUNK_SHIFT = 20;
const UNIT_CHUNK = 1 << UNIT_CHUNK_SHIFT;
/** Longer texts (no localId of a real batch) are kept as strings, in a Map. */
const LONGEST_PACKED = 4096;

/**
 * A Map from strings to their index (0, 1, 2, ... in the order added)
 * without a string or a Map entry per key: the keys' UTF-16 code units one
 * after the other in chunks of 2 MB never copied, found through an
 * open-addressing table over them. What the survey keeps of every localId of
 * a batch to its end (a string and a Map entry were about 75 bytes of heap
 * each, which V8 gives room to grow by a third again).
 */
export class StringIndex {
  readonly #chunks: Uint16Array[] = [];
  /** Units used of the last chunk. */
  #used = UNIT_CHUNK;
  /** Key i: chunk * UNIT_CHUNK + offset of its first unit, and its length (LONGEST_PACKED + 1: in #long). */
  readonly #starts = new Uint32Column();
  readonly #lengths = new Uint32Column();
  readonly #long = new Map<number, string>();
  /** Entry index + 1 by hash slot; 0: empty. */
  #table = new Int32Array(2048);

  get size(): number {
    return this.#lengths.length;
  }

  /** The index of `key`, or undefined. */
  get(key: string): number | undefined {
    const mask = this.#table.length - 1;
    for (let slot = hashText(key) & mask; ; slot = (slot + 1) & mask) {
      const held = this.#table[slot]!;
      if (held === 0) return undefined;
      if (this.#equals(held - 1, key)) return held - 1;
    }
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Adds a key not yet present (the caller checks): its index. */
  add(key: string): number {
    const index = this.#lengths.length;
    if (key.length > LONGEST_PACKED) {
      this.#long.set(index, key);
      this.#starts.set(index, 0);
      this.#lengths.set(index, LONGEST_PACKED + 1);
    } else {
      if (this.#used + key.length > UNIT_CHUNK) {
        this.#chunks.push(new Uint16Array(UNIT_CHUNK));
        this.#used = 0;
      }
      const chunk = this.#chunks.length - 1;
      const units = this.#chunks[chunk]!;
      for (let at = 0; at < key.length; at += 1) units[this.#used + at] = key.charCodeAt(at);
      this.#starts.set(index, chunk * UNIT_CHUNK + this.#used);
      this.#lengths.set(index, key.length);
      this.#used += key.length;
    }
    if ((index + 1) * 2 > this.#table.length) this.#rehash(this.#table.length * 2);
    else this.#place(index, hashText(key));
    return index;
  }

  /** Key `index` (a new flat string). */
  at(index: number): string {
    const length = this.#lengths.get(index);
    if (length > LONGEST_PACKED) return this.#long.get(index)!;
    const start = this.#starts.get(index);
    const units = this.#chunks[start >>> UNIT_CHUNK_SHIFT]!;
    const offset = start & (UNIT_CHUNK - 1);
    return String.fromCharCode.apply(null, units.subarray(offset, offset + length) as unknown as number[]);
  }

  #equals(index: number, key: string): boolean {
    const length = this.#lengths.get(index);
    if (length > LONGEST_PACKED) return this.#long.get(index) === key;
    if (length !== key.length) return false;
    const start = this.#starts.get(index);
    const units = this.#chunks[start >>> UNIT_CHUNK_SHIFT]!;
    const offset = start & (UNIT_CHUNK - 1);
    for (let at = 0; at < length; at += 1) if (units[offset + at] !== key.charCodeAt(at)) return false;
    return true;
  }

  #place(index: number, hash: number): void {
    const mask = this.#table.length - 1;
    let slot = hash & mask;
    while (this.#table[slot] !== 0) slot = (slot + 1) & mask;
    this.#table[slot] = index + 1;
  }

  #rehash(size: number): void {
    this.#table = new Int32Array(size);
    for (let index = 0; index < this.#lengths.length; index += 1) this.#place(index, this.#hashAt(index));
  }

  /** hashText of key `index`, from its units. */
  #hashAt(index: number): number {
    const length = this.#lengths.get(index);
    if (length > LONGEST_PACKED) return hashText(this.#long.get(index)!);
    const start = this.#starts.get(index);
    const units = this.#chunks[start >>> UNIT_CHUNK_SHIFT]!;
    const offset = start & (UNIT_CHUNK - 1);
    let hash = 0x811c9dc5;
    for (let at = 0; at < length; at += 1) hash = Math.imul(hash ^ units[offset + at]!, 0x01000193);
    return hash >>> 0;
  }
}

/** A 32-bit hash of a text's UTF-16 code units (FNV-1a). */
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return hash >>> 0;
}
