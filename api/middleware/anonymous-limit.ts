import type { Context } from 'koa';
import type { AppDeps } from '../deps.ts';
import { clientAddress } from '../client-address.ts';

// Anonymous readers (public record pages, a public OAI-PMH endpoint) have no
// principal to budget, so they are budgeted per source address, in the same
// shared counter table as submissions (a key of its own per address), so N
// API processes allow the limit once between them.

export interface AnonymousReadVerdict {
  allowed: boolean;
  /** Seconds until the address's window ends: what Retry-After says when refused. */
  retryAfter: number;
}

/**
 * Counts one anonymous read from this request's source address:
 * ANONYMOUS_READ_RATE_LIMIT per ANONYMOUS_READ_RATE_WINDOW_SECONDS (0: no limit).
 * A request with a principal is not counted here: its own budgets apply.
 */
export async function countAnonymousRead(deps: Pick<AppDeps, 'config' | 'db'>, ctx: Context): Promise<AnonymousReadVerdict> {
  const max = deps.config.ANONYMOUS_READ_RATE_LIMIT;
  if (max === 0 || ctx.state.principal !== undefined) return { allowed: true, retryAfter: 0 };
  const counted = await deps.db.submissionRate.count(
    `anonymous-read:${clientAddress(ctx)}`,
    deps.config.ANONYMOUS_READ_RATE_WINDOW_SECONDS,
  );
  return { allowed: counted.count <= max, retryAfter: Math.max(1, Math.ceil(counted.secondsLeft)) };
}
