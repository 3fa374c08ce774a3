import type { Context } from 'koa';
import { countSubmission } from '../../services/jobs/submission-guards.ts';
import type { AppDeps } from '../deps.ts';
import { clientAddress } from '../client-address.ts';
import { problem, type ProblemError } from '../problems.ts';

// Failed authentication, counted per source address in the shared counter
// table (so every API process counts together): past AUTH_FAILURE_LIMIT in
// AUTH_FAILURE_WINDOW_SECONDS the address's failures are answered 429 with
// Retry-After instead of 401, and this process remembers the address until
// the window ends, so a flood of bad credentials costs no database write per
// request. Valid credentials from the same address are never refused: an
// archive's colleagues behind one NAT address keep working.

const REMEMBERED_MAX = 10_000;

export function authFailureThrottle(deps: Pick<AppDeps, 'config' | 'db'>): (ctx: Context, refusal: ProblemError) => Promise<ProblemError> {
  const { AUTH_FAILURE_LIMIT: max, AUTH_FAILURE_WINDOW_SECONDS: windowSeconds } = deps.config;
  /** Addresses over the limit, with when their window ends (ms since the epoch). */
  const throttled = new Map<string, number>();
  const tooMany = (until: number) => {
    const retryAfter = Math.max(1, Math.ceil((until - Date.now()) / 1000));
    const error = problem(429, 'TooManyRequests', `too many failed authentications from this address; retry in ${retryAfter} s`);
    error.headers = { ...error.headers, 'retry-after': String(retryAfter) };
    return error;
  };
  return async (ctx, refusal) => {
    if (max === 0) return refusal;
    const address = clientAddress(ctx);
    const until = throttled.get(address);
    if (until !== undefined && until > Date.now()) return tooMany(until);
    const counted = await countSubmission(deps, `auth-failure:${address}`, windowSeconds);
    if (counted.count <= max) return refusal;
    if (throttled.size >= REMEMBERED_MAX) throttled.clear();
    const ends = Date.now() + counted.secondsLeft * 1000;
    throttled.set(address, ends);
    ctx.state.log?.warn({ address, failures: counted.count }, 'failed authentications throttled for this address');
    return tooMany(ends);
  };
}
