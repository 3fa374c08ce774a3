// Slots shared between principals, for the uploads of one API process
// (api/upload-slots.ts).

/**
 * Slots handed out in arrival order, except that no principal holds more
 * than its share: a waiter whose principal holds its share lets the next
 * one by. An upload in progress cannot be stopped to make room, so the share
 * is kept before it is needed.
 */
export class FairSlots {
  readonly size: number;
  readonly #share: number;
  readonly #held = new Map<string, number>();
  readonly #waiting: { principal: string; granted: () => void }[] = [];
  #inUse = 0;

  constructor(size: number) {
    this.size = size;
    // Half, rounded up: with one slot, there is nothing to share.
    this.#share = Math.ceil(size / 2);
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  get inUse(): number {
    return this.#inUse;
  }

  async acquire(principal: string): Promise<void> {
    if (this.#waiting.length === 0 && this.#mayTake(principal)) return this.#take(principal);
    await new Promise<void>((granted) => {
      this.#waiting.push({ principal, granted });
      this.#grant();
    });
  }

  release(principal: string): void {
    this.#inUse -= 1;
    const held = (this.#held.get(principal) ?? 1) - 1;
    if (held === 0) this.#held.delete(principal);
    else this.#held.set(principal, held);
    this.#grant();
  }

  #mayTake(principal: string): boolean {
    return this.#inUse < this.size && (this.#held.get(principal) ?? 0) < this.#share;
  }

  #take(principal: string): void {
    this.#inUse += 1;
    this.#held.set(principal, (this.#held.get(principal) ?? 0) + 1);
  }

  #grant(): void {
    while (this.#inUse < this.size) {
      const next = this.#waiting.findIndex((waiter) => this.#mayTake(waiter.principal));
      if (next === -1) return;
      const [waiter] = this.#waiting.splice(next, 1);
      this.#take(waiter!.principal);
      waiter!.granted();
    }
  }
}
