/**
 * A Map from entity ids to values, for what a batch keeps per entity to its
 * end (its creates, their final states). The ids a batch allocates come from
 * one sequence, in order, so they are nearly contiguous: those take an array
 * slot each (8 bytes) instead of a Map entry (about 40 with its share of the
 * table); any other id (a stored entity) takes a Map entry.
 */
export class EntityIdMap<V> {
  /** How far past the first dense id the array reaches (32 MB of slots at most). */
  static readonly DENSE_SPAN = 1 << 22;
  #base: number | undefined;
  readonly #dense: (V | undefined)[] = [];
  readonly #sparse = new Map<number, V>();

  /** Ids from `entityId` on (up to DENSE_SPAN of them) take array slots; only before anything is set. */
  anchor(entityId: number): void {
    if (this.#base === undefined && this.#sparse.size === 0) this.#base = entityId;
  }

  get(entityId: number): V | undefined {
    const index = this.#index(entityId);
    return index === undefined ? this.#sparse.get(entityId) : this.#dense[index];
  }

  has(entityId: number): boolean {
    return this.get(entityId) !== undefined;
  }

  /** `value` must not be undefined (it means absent). */
  set(entityId: number, value: V): void {
    if (this.#base === undefined) this.#base = entityId;
    const index = this.#index(entityId);
    if (index === undefined) {
      this.#sparse.set(entityId, value);
      return;
    }
    // Filled up to the index first: an array grown by a far write turns into a slow dictionary.
    while (this.#dense.length < index) this.#dense.push(undefined);
    this.#dense[index] = value;
  }

  #index(entityId: number): number | undefined {
    if (this.#base === undefined) return undefined;
    const index = entityId - this.#base;
    return index >= 0 && index < EntityIdMap.DENSE_SPAN ? index : undefined;
  }
}
