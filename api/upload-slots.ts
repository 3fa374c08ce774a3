import type { Context } from 'koa';
import { LongReadLimiter } from '../services/limits/long-reads.ts';
import { xmlBodyStream } from './body.ts';
import { FairSlots } from './fair-slots.ts';
import type { AppDeps } from './deps.ts';
import { problem } from './problems.ts';

// Batch uploads in flight. Each one holds a slice of its body (and
// libxml2's tree of it) while it is validated, and a database connection
// with an open transaction while it is stored; the excess waits here before a
// byte of its body is read (TCP holds the rest of it back at the client), and
// runs in arrival order as others finish.
//
// Four bounds keep one writer from holding the others back:
//  - per principal, across every API process (UPLOADS_PER_PRINCIPAL, leases
//    in PostgreSQL as for the long reads): beyond it, 429 with Retry-After;
//  - per principal, within a process: at most half of its large slots (and
//    half of its small ones), so another principal's upload always finds a
//    slot free or the next one freed (docs/decisions/0148);
//  - per process, a wait queue of UPLOAD_MAX_WAITING: beyond it, 503 with
//    Retry-After, never an unbounded pile of waiting requests;
//  - per upload, an idle timeout (UPLOAD_IDLE_SECONDS) and a minimum rate
//    (UPLOAD_MIN_BYTES_PER_SECOND over UPLOAD_MIN_RATE_WINDOW_SECONDS of
//    waiting for the body): a body that stops arriving, or trickles, is cut
//    and its transaction rolled back, so it leaves nothing.

// Small uploads (a declared Content-Length within SMALL_BATCH_MAX_BYTES: a
// person's save) have slots of their own, so they never wait behind a large
// one; a chunked upload declares nothing and waits with the large ones.

/** Small uploads at once per process: each holds at most its body (1 MiB by default) before it is stored. */
const SMALL_UPLOADS_AT_ONCE = 8;
/** What a refused upload is told to wait. */
const RETRY_AFTER_SECONDS = '5';

interface UploadGate {
  large: FairSlots;
  small: FairSlots;
  principals: LongReadLimiter;
  cut: Record<UploadCut, number>;
}

/** Why an upload was cut while its body arrived. */
export type UploadCut = 'idle' | 'slow';

const gates = new WeakMap<object, UploadGate>();

/** This process's uploads as they stand (for /metrics and the tests): slots in use, uploads waiting, uploads cut. */
export function uploadActivity(db: object): {
  large: { inUse: number; waiting: number };
  small: { inUse: number; waiting: number };
  cut: Record<UploadCut, number>;
} {
  const gate = gates.get(db);
  const of = (slots: FairSlots | undefined) => ({ inUse: slots?.inUse ?? 0, waiting: slots?.waiting ?? 0 });
  return { large: of(gate?.large), small: of(gate?.small), cut: { ...(gate?.cut ?? { idle: 0, slow: 0 }) } };
}

function refused(status: 429 | 503, detail: string) {
  const error = problem(status, status === 429 ? 'TooManyRequests' : 'ServiceUnavailable', detail);
  error.headers = { ...error.headers, 'retry-after': RETRY_AFTER_SECONDS };
  return error;
}

function gateOf(deps: Pick<AppDeps, 'config' | 'db' | 'log'>): UploadGate {
  let gate = gates.get(deps.db);
  if (!gate) {
    const { config } = deps;
    gate = {
      large: new FairSlots(config.UPLOAD_MAX_CONCURRENT),
      small: new FairSlots(SMALL_UPLOADS_AT_ONCE),
      principals: new LongReadLimiter(
        deps.db,
        { perPrincipal: config.UPLOADS_PER_PRINCIPAL, leaseSeconds: config.LONG_READ_LEASE_SECONDS },
        deps.log,
      ),
      cut: { idle: 0, slow: 0 },
    };
    gates.set(deps.db, gate);
  }
  return gate;
}

/**
 * Runs `upload` (read the body, validate and store it) in one of the
 * UPLOAD_MAX_CONCURRENT slots of this process, or one of the small uploads'
 * slots when the request's Content-Length (which the body reader holds it
 * to) is small, waiting for one when all are taken or the principal holds
 * its share. `upload` is given the XML body as it arrives, within
 * BATCH_MAX_BYTES and the minimum rate. Only the upload: a v1 route that
 * then waits for its batch holds no slot.
 */
export async function inUploadSlot<T>(
  deps: Pick<AppDeps, 'config' | 'db' | 'log'>,
  ctx: Context,
  upload: (body: AsyncIterable<Buffer>) => Promise<T>,
): Promise<T> {
  const { config } = deps;
  const gate = gateOf(deps);
  const principal = String(ctx.state.principal.name);
  const declaredBytes = ctx.request.length;
  const slots = declaredBytes !== undefined && declaredBytes <= config.SMALL_BATCH_MAX_BYTES ? gate.small : gate.large;
  if (slots.waiting >= config.UPLOAD_MAX_WAITING)
    throw refused(503, `${slots.waiting} uploads are already waiting on this server; send it again shortly`);
  const lease = await gate.principals.take(`upload:${principal}`);
  if (!lease)
    throw refused(429, `this principal already has ${config.UPLOADS_PER_PRINCIPAL} uploads in progress; send it again when one has ended`);
  try {
    await slots.acquire(principal);
    const socket = ctx.req.socket;
    // A body that stops arriving is cut: the upload's stream fails and its transaction is rolled back.
    const cutIdle = () => {
      gate.cut.idle += 1;
      ctx.state.log?.info({ idleSeconds: config.UPLOAD_IDLE_SECONDS }, 'upload cut: its body stopped arriving');
      socket.destroy();
    };
    socket.setTimeout(config.UPLOAD_IDLE_SECONDS * 1000);
    socket.once('timeout', cutIdle);
    // Once the body is in, the time the service takes with it is not the client's idleness.
    const bodyEnded = () => socket.setTimeout(0);
    ctx.req.once('end', bodyEnded);
    const minimumRate =
      config.UPLOAD_MIN_BYTES_PER_SECOND === 0
        ? undefined
        : {
            bytesPerSecond: config.UPLOAD_MIN_BYTES_PER_SECOND,
            windowSeconds: config.UPLOAD_MIN_RATE_WINDOW_SECONDS,
            onTooSlow: (bytesPerSecond: number) => {
              gate.cut.slow += 1;
              ctx.state.log?.info(
                { bytesPerSecond, minimum: config.UPLOAD_MIN_BYTES_PER_SECOND, windowSeconds: config.UPLOAD_MIN_RATE_WINDOW_SECONDS },
                'upload cut: its body arrived below the minimum rate',
              );
            },
          };
    try {
      return await upload(xmlBodyStream(ctx, config.BATCH_MAX_BYTES, minimumRate));
    } finally {
      // Removed, not only disarmed: a kept-alive connection carries many uploads, and each would leave its listener.
      socket.setTimeout(0);
      socket.off('timeout', cutIdle);
      ctx.req.off('end', bodyEnded);
      slots.release(principal);
    }
  } finally {
    lease.release();
  }
}
