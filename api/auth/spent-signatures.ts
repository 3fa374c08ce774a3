/**
 * Signatures already used for a write, each kept until its date leaves the
 * accepted window. Held in this process's memory and bounded: beyond
 * `capacity` live entries the oldest is forgotten (docs/decisions.md).
 */
export class SpentSignatures {
  readonly #expiries = new Map<string, number>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#expiries.size;
  }

  /** True the first time `key` is spent; false while an earlier use of it is still within its window. */
  spend(key: string, expiresAt: number, now = Date.now()): boolean {
    this.#forgetExpired(now);
    const earlier = this.#expiries.get(key);
    if (earlier !== undefined && earlier >= now) return false;
    if (this.#expiries.size >= this.#capacity) this.#expiries.delete(this.#expiries.keys().next().value!);
    this.#expiries.set(key, expiresAt);
    return true;
  }

  // Entries arrive roughly in expiry order (dates differ by at most twice the clock skew), so a sweep
  // from the oldest stops at the first live one; a straggler goes when the capacity pushes it out.
  #forgetExpired(now: number): void {
    for (const [key, expiresAt] of this.#expiries) {
      if (expiresAt >= now) break;
      this.#expiries.delete(key);
    }
  }
}
