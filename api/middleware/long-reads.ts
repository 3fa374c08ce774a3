import type { Context, Middleware } from 'koa';
import { LongReadLimiter } from '../../services/limits/long-reads.ts';
import type { AppDeps } from '../deps.ts';
import { problem } from '../problems.ts';

// Route guard of the long reads: feed pages, export downloads and the
// synchronous v1 exports. Each holds one of its principal's slots
// (LONG_READS_PER_PRINCIPAL, shared by every API process) from before its
// work starts until its response is written or cut. A response that sends
// nothing for LONG_READ_STALL_SECONDS, or is still being written after
// LONG_READ_MAX_SECONDS, is cut: its socket closes, its cursor with it, and
// its connection and transaction go back to the pool.

/** What a refused long read is told to wait: about one short page's time. */
const RETRY_AFTER_SECONDS = 2;

const limiters = new WeakMap<object, LongReadLimiter>();

export function limitLongReads(deps: Pick<AppDeps, 'config' | 'db' | 'log'>): Middleware {
  const { config } = deps;
  let limiter = limiters.get(deps.db);
  if (!limiter)
    limiters.set(
      deps.db,
      (limiter = new LongReadLimiter(
        deps.db,
        { perPrincipal: config.LONG_READS_PER_PRINCIPAL, leaseSeconds: config.LONG_READ_LEASE_SECONDS },
        deps.log,
      )),
    );
  const slots = limiter;
  return async function limitLongReadsMiddleware(ctx, next) {
    const lease = await slots.take(String(ctx.state.principal.name));
    if (!lease) {
      const error = problem(
        429,
        'TooManyRequests',
        `this principal already holds ${config.LONG_READS_PER_PRINCIPAL} long reads (feed pages, exports) at once; retry when one has ended`,
      );
      error.headers = { ...error.headers, 'retry-after': String(RETRY_AFTER_SECONDS) };
      throw error;
    }
    // 'close' comes once the response is written, cut, or abandoned by the client: whatever happens next.
    ctx.res.once('close', () => lease.release());
    await next();
    cutWhenStalled(ctx, config.LONG_READ_STALL_SECONDS * 1000, config.LONG_READ_MAX_SECONDS * 1000);
  };
}

/** Destroys the socket of a response that makes no progress for `stallMs`, or runs past `maxMs`. */
export function cutWhenStalled(ctx: Context, stallMs: number, maxMs: number): void {
  const socket = ctx.req.socket;
  let written = socket.bytesWritten;
  const cut = (why: string) => {
    ctx.state.log?.info({ why }, 'long read cut');
    socket.destroy();
  };
  const stall = setInterval(() => {
    if (socket.bytesWritten === written) cut(`nothing sent for ${stallMs / 1000} s`);
    written = socket.bytesWritten;
  }, stallMs);
  const deadline = setTimeout(() => cut(`still writing after ${maxMs / 1000} s`), maxMs);
  stall.unref();
  deadline.unref();
  ctx.res.once('close', () => {
    clearInterval(stall);
    clearTimeout(deadline);
  });
}
