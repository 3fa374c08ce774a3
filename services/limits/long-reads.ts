import { hostname } from 'node:os';
import type { Db } from '../../db/index.ts';
import type { Logger } from '../../logger.ts';

// The long reads (feed pages, export downloads, synchronous v1 exports) one
// principal holds at once, counted across every API process by leases in
// PostgreSQL (db/long-read-leases.ts). This process renews the leases it
// holds every third of a lease's length; if it dies, they lapse within one
// lease, and the principal gets its slots back without anyone's help.

export interface LongReadLease {
  /** Gives the slot back; safe to call more than once. */
  release(): void;
}

export interface LongReadLimiterOptions {
  /** Long reads per principal; 0: no limit. */
  perPrincipal: number;
  leaseSeconds: number;
}

export class LongReadLimiter {
  readonly #db: Pick<Db, 'longReadLeases'>;
  readonly #options: LongReadLimiterOptions;
  readonly #log: Logger;
  readonly #held = new Set<string>();
  readonly #holder = `${hostname()}:${process.pid}`;
  #renewal: NodeJS.Timeout | undefined;

  constructor(db: Pick<Db, 'longReadLeases'>, options: LongReadLimiterOptions, log: Logger) {
    this.#db = db;
    this.#options = options;
    this.#log = log;
  }

  /** A slot for `principal`, or undefined when it holds its limit already. */
  async take(principal: string): Promise<LongReadLease | undefined> {
    const { perPrincipal, leaseSeconds } = this.#options;
    if (perPrincipal === 0) return { release: () => undefined };
    const id = await this.#db.longReadLeases.take(principal, this.#holder, perPrincipal, leaseSeconds);
    if (id === undefined) return undefined;
    this.#held.add(id);
    this.#renewEvery(leaseSeconds);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#held.delete(id);
        // A release that fails leaves the lease to lapse on its own.
        this.#db.longReadLeases
          .release(id)
          .catch((error: unknown) => this.#log.warn({ err: error }, 'a long read lease was not released; it lapses on its own'));
      },
    };
  }

  #renewEvery(leaseSeconds: number): void {
    if (this.#renewal !== undefined) return;
    this.#renewal = setInterval(
      () => {
        if (this.#held.size === 0) {
          clearInterval(this.#renewal);
          this.#renewal = undefined;
          return;
        }
        this.#db.longReadLeases
          .renew([...this.#held], leaseSeconds)
          .catch((error: unknown) => this.#log.warn({ err: error }, 'long read leases were not renewed'));
      },
      (leaseSeconds * 1000) / 3,
    );
    this.#renewal.unref();
  }
}

export { isDatabaseBusy } from '../../db/busy.ts';
