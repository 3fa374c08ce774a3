import type { Context } from 'koa';
import { LongReadLimiter } from '../services/limits/long-reads.ts';
import type { AppDeps } from './deps.ts';
import { problem } from './problems.ts';

// Batch uploads in flight. Each one holds a slice of its body (and
// libxml2's tree of it) while it is validated, and a database connection
// with an open transaction while it is stored; the excess waits here before a
// byte of its body is read (TCP holds the rest of it back at the client), and
// runs in arrival order as others finish.
//
// Three bounds keep one writer from holding the others back:
//  - per principal, across every API process (UPLOADS_PER_PRINCIPAL, leases
//    in PostgreSQL as for the long reads): beyond it, 429 with Retry-After;
//  - per process, a wait queue of UPLOAD_MAX_WAITING: beyond it, 503 with
//    Retry-After, never an unbounded pile of waiting requests;
//  - per upload, an idle timeout (UPLOAD_IDLE_SECONDS): a body that stops
//    arriving is cut, and its transaction rolled back, so it leaves nothing.

// Small uploads (a declared Content-Length within SMALL_BATCH_MAX_BYTES: a
// person's save) have slots of their own, so they never wait behind a large
// one; a chunked upload declares nothing and waits with the large ones.

/** Small uploads at once per process: each holds at most its body (1 MiB by default) before it is stored. */
const SMALL_UPLOADS_AT_ONCE = 8;
/** What a refused upload is told to wait. */
const RETRY_AFTER_SECONDS = '5';

interface UploadGate {
  large: Semaphore;
  small: Semaphore;
  principals: LongReadLimiter;
}

const gates = new WeakMap<object, UploadGate>();

class Semaphore {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  get waiting(): number {
    return this.#waiting.length;
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

function refused(status: 429 | 503, detail: string) {
  const error = problem(status, status === 429 ? 'TooManyRequests' : 'ServiceUnavailable', detail);
  error.headers = { ...error.headers, 'retry-after': RETRY_AFTER_SECONDS };
  return error;
}

/**
 * Runs `upload` (read the body, validate and store it) in one of the
 * UPLOAD_MAX_CONCURRENT slots of this process, or one of the small uploads'
 * slots when the request's Content-Length (which the body reader holds it
 * to) is small, waiting for one when all are taken. Only the upload: a v1
 * route that then waits for its batch holds no slot.
 */
export async function inUploadSlot<T>(deps: Pick<AppDeps, 'config' | 'db' | 'log'>, ctx: Context, upload: () => Promise<T>): Promise<T> {
  const { config } = deps;
  let gate = gates.get(deps.db);
  if (!gate) {
    gates.set(
      deps.db,
      (gate = {
        large: new Semaphore(config.UPLOAD_MAX_CONCURRENT),
        small: new Semaphore(SMALL_UPLOADS_AT_ONCE),
        principals: new LongReadLimiter(
          deps.db,
          { perPrincipal: config.UPLOADS_PER_PRINCIPAL, leaseSeconds: config.LONG_READ_LEASE_SECONDS },
          deps.log,
        ),
      }),
    );
  }
  const declaredBytes = ctx.request.length;
  const semaphore = declaredBytes !== undefined && declaredBytes <= config.SMALL_BATCH_MAX_BYTES ? gate.small : gate.large;
  if (semaphore.waiting >= config.UPLOAD_MAX_WAITING)
    throw refused(503, `${semaphore.waiting} uploads are already waiting on this server; send it again shortly`);
  const lease = await gate.principals.take(`upload:${String(ctx.state.principal.name)}`);
  if (!lease)
    throw refused(429, `this principal already has ${config.UPLOADS_PER_PRINCIPAL} uploads in progress; send it again when one has ended`);
  try {
    await semaphore.acquire();
    const socket = ctx.req.socket;
    // A body that stops arriving is cut: the upload's stream fails and its transaction is rolled back.
    const cutIdle = () => {
      ctx.state.log?.info({ idleSeconds: config.UPLOAD_IDLE_SECONDS }, 'upload cut: its body stopped arriving');
      socket.destroy();
    };
    socket.setTimeout(config.UPLOAD_IDLE_SECONDS * 1000);
    socket.once('timeout', cutIdle);
    try {
      return await upload();
    } finally {
      // Removed, not only disarmed: a kept-alive connection carries many uploads, and each would leave its listener.
      socket.setTimeout(0);
      socket.off('timeout', cutIdle);
      semaphore.release();
    }
  } finally {
    lease.release();
  }
}
