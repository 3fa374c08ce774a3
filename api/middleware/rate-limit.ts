import type { Middleware } from 'koa';
import { countSubmission } from '../../services/jobs/submission-guards.ts';
import type { AppDeps } from '../deps.ts';
import { problem } from '../problems.ts';

// Two budgets per principal, each a counter row in PostgreSQL
// (deps.db.submissionRate), so N API processes allow a limit once between
// them, not N times:
//  - batches (batches and test batches, v1 and v2): a client cannot double
//    its allowance by switching routes;
//  - export requests (v2 export starts, synchronous v1 snapshots and
//    revisions), under a key of their own: a reader catching up in snapshots
//    never spends the budget an archivist's next save needs.

interface Budget {
  /** The counter's key for a principal. */
  key: (principal: string) => string;
  max: number;
  windowSeconds: number;
  what: string;
}

/**
 * Route guard for batch submissions, placed after requirePermission: at most
 * SUBMISSION_RATE_LIMIT per principal in SUBMISSION_RATE_WINDOW_SECONDS, beyond
 * that 429 TooManyRequests with Retry-After. A limit of 0 turns it off.
 */
export function limitSubmissions(deps: Pick<AppDeps, 'config' | 'db'>): Middleware {
  return limitBy(deps, {
    key: (principal) => principal,
    max: deps.config.SUBMISSION_RATE_LIMIT,
    windowSeconds: deps.config.SUBMISSION_RATE_WINDOW_SECONDS,
    what: 'batch submissions',
  });
}

/** Route guard for export requests: EXPORT_RATE_LIMIT per principal in EXPORT_RATE_WINDOW_SECONDS, apart from the batches' budget. */
export function limitExportRequests(deps: Pick<AppDeps, 'config' | 'db'>): Middleware {
  return limitBy(deps, {
    key: (principal) => `export:${principal}`,
    max: deps.config.EXPORT_RATE_LIMIT,
    windowSeconds: deps.config.EXPORT_RATE_WINDOW_SECONDS,
    what: 'export requests',
  });
}

function limitBy(deps: Pick<AppDeps, 'db'>, budget: Budget): Middleware {
  const { max, windowSeconds } = budget;
  if (max === 0) return (_ctx, next) => next();
  return async function rateLimitMiddleware(ctx, next) {
    const counted = await countSubmission(deps, budget.key(String(ctx.state.principal.name)), windowSeconds);
    // The headers koa-ratelimit used to send, kept for whoever reads them.
    ctx.set({
      'X-RateLimit-Limit': String(max),
      'X-RateLimit-Remaining': String(Math.max(0, max - counted.count)),
      'X-RateLimit-Reset': String(Math.ceil(counted.windowEndsAt)),
    });
    if (counted.count <= max) return next();
    const retryAfter = Math.max(1, Math.ceil(counted.secondsLeft));
    const error = problem(
      429,
      'TooManyRequests',
      `more than ${max} ${budget.what} in ${windowSeconds} s for this principal; retry in ${retryAfter} s`,
    );
    error.headers = { ...error.headers, 'retry-after': String(retryAfter) };
    throw error;
  };
}
