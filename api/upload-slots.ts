import type { Config } from '../config.ts';

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

/**
 * Runs `upload` (read the body, validate and store it) in one of the
 * UPLOAD_MAX_CONCURRENT slots of this process, waiting for one when all are
 * taken. Only the upload: a v1 route that then waits for its batch holds no slot.
 */
export async function inUploadSlot<T>(config: Config, upload: () => Promise<T>): Promise<T> {
  let semaphore = semaphores.get(config);
  if (!semaphore) semaphores.set(config, (semaphore = new Semaphore(config.UPLOAD_MAX_CONCURRENT)));
  await semaphore.acquire();
  try {
    return await upload();
  } finally {
    semaphore.release();
  }
}
