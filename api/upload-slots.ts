import type { Config } from '../config.ts';

// Batch uploads in flight per API process. Each one holds a slice of its body
// (and libxml2's tree of it) while it is validated, and a database connection
// with an open transaction while it is stored; the excess waits here before a
// byte of its body is read (TCP holds the rest of it back at the client), and
// runs in arrival order as others finish.

// Small uploads (a declared Content-Length within SMALL_BATCH_MAX_BYTES: a
// person's save) have slots of their own, so they never wait behind a large
// one; a chunked upload declares nothing and waits with the large ones.

/** Small uploads at once per process: each holds at most its body (1 MiB by default) before it is stored. */
const SMALL_UPLOADS_AT_ONCE = 8;

const semaphores = new WeakMap<Config, { large: Semaphore; small: Semaphore }>();

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
 * UPLOAD_MAX_CONCURRENT slots of this process, or one of the small uploads'
 * slots when `declaredBytes` (the request's Content-Length, which the body
 * reader holds it to) is small, waiting for one when all are taken. Only the
 * upload: a v1 route that then waits for its batch holds no slot.
 */
export async function inUploadSlot<T>(config: Config, declaredBytes: number | undefined, upload: () => Promise<T>): Promise<T> {
  let slots = semaphores.get(config);
  if (!slots) semaphores.set(config, (slots = { large: new Semaphore(config.UPLOAD_MAX_CONCURRENT), small: new Semaphore(SMALL_UPLOADS_AT_ONCE) }));
  const semaphore = declaredBytes !== undefined && declaredBytes <= config.SMALL_BATCH_MAX_BYTES ? slots.small : slots.large;
  await semaphore.acquire();
  try {
    return await upload();
  } finally {
    semaphore.release();
  }
}
