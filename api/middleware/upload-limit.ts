import type { Middleware } from 'koa';
import type { Config } from '../../config.ts';

// Batch uploads in flight per API process. Each one holds its body while it
// is validated and stored, so many at once multiply the API's memory; the
// excess waits here before a byte of its body is read (TCP holds the rest of
// it back at the client), and runs in arrival order as others finish.

const semaphores = new WeakMap<Config, Semaphore>();

class Semaphore {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#free += 1;
  }
}

/** Route guard for the routes that take a batch body: at most UPLOAD_MAX_CONCURRENT run at once in this process. */
export function limitUploads(config: Config): Middleware {
  let semaphore = semaphores.get(config);
  if (!semaphore) semaphores.set(config, (semaphore = new Semaphore(config.UPLOAD_MAX_CONCURRENT)));
  const slots = semaphore;
  return async function limitUploadsMiddleware(_ctx, next) {
    await slots.acquire();
    try {
      await next();
    } finally {
      slots.release();
    }
  };
}
