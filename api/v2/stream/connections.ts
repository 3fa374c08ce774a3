import type { Context } from 'koa';
import { LongReadLimiter, type LongReadLease } from '../../../services/limits/long-reads.ts';
import { clientAddress } from '../../client-address.ts';
import type { AppDeps } from '../../deps.ts';
import { problem } from '../../problems.ts';

// The open push streams one principal, and one client address, may hold,
// counted across every API process by the long reads' leases in PostgreSQL
// (db/long-read-leases.ts) under keys of their own: a stream holds a lease
// for as long as its socket is open, renewed by this process; a process that
// dies lets its leases lapse within LONG_READ_LEASE_SECONDS.

const RETRY_AFTER_SECONDS = 5;

interface Limiters {
  principal: LongReadLimiter;
  address: LongReadLimiter;
}
const limiters = new WeakMap<object, Limiters>();

/** Both slots of a new stream, released when its response closes; refused 429 when either is full. */
export async function takeStreamSlots(deps: Pick<AppDeps, 'config' | 'db' | 'log'>, ctx: Context): Promise<void> {
  const { config } = deps;
  let both = limiters.get(deps.db);
  if (!both) {
    const limiter = (perPrincipal: number) =>
      new LongReadLimiter(deps.db, { perPrincipal, leaseSeconds: config.LONG_READ_LEASE_SECONDS }, deps.log);
    both = { principal: limiter(config.STREAM_CONNECTIONS_PER_PRINCIPAL), address: limiter(config.STREAM_CONNECTIONS_PER_ADDRESS) };
    limiters.set(deps.db, both);
  }
  const principal = await both.principal.take(`stream-principal:${String(ctx.state.principal.name)}`);
  if (!principal) throw full(`this principal already holds ${config.STREAM_CONNECTIONS_PER_PRINCIPAL} push streams`);
  let address: LongReadLease | undefined;
  try {
    address = await both.address.take(`stream-address:${clientAddress(ctx)}`);
  } finally {
    if (!address) principal.release();
  }
  if (!address) throw full(`this address already holds ${config.STREAM_CONNECTIONS_PER_ADDRESS} push streams`);
  ctx.res.once('close', () => {
    principal.release();
    address.release();
  });
}

function full(detail: string) {
  const error = problem(429, 'TooManyRequests', `${detail}; close one, or retry in ${RETRY_AFTER_SECONDS} s`);
  error.headers = { ...error.headers, 'retry-after': String(RETRY_AFTER_SECONDS) };
  return error;
}
