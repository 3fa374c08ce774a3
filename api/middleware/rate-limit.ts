import type { Middleware } from 'koa';
import { countSubmission } from '../../services/jobs/submission-guards.ts';
import type { AppDeps } from '../deps.ts';
import { problem } from '../problems.ts';

// One counter per principal across every submission route (batches, test
// batches, exports, v1 and v2): a client cannot double its allowance by
// switching routes. The counter is a row in PostgreSQL (deps.db.submissionRate),
// so N API processes allow the limit once between them, not N times.

/**
 * Route guard for submissions, placed after requirePermission: at most
 * SUBMISSION_RATE_LIMIT per principal in SUBMISSION_RATE_WINDOW_SECONDS, beyond
 * that 429 TooManyRequests with Retry-After. A limit of 0 turns it off.
 */
export function limitSubmissions(deps: Pick<AppDeps, 'config' | 'db'>): Middleware {
  const max = deps.config.SUBMISSION_RATE_LIMIT;
  const windowSeconds = deps.config.SUBMISSION_RATE_WINDOW_SECONDS;
  if (max === 0) return (_ctx, next) => next();
  return async function limitSubmissionsMiddleware(ctx, next) {
    const counted = await countSubmission(deps, String(ctx.state.principal.name), windowSeconds);
    // The headers koa-ratelimit used to send, kept for whoever reads them.
    ctx.set({
      'X-RateLimit-Limit': String(max),
      'X-RateLimit-Remaining': String(Math.max(0, max - counted.count)),
      'X-RateLimit-Reset': String(Math.ceil(counted.windowEndsAt)),
    });
    if (counted.count <= max) return next();
    const retryAfter = Math.max(1, Math.ceil(counted.secondsLeft));
    const error = problem(429, 'TooManyRequests', `more than ${max} submissions in ${windowSeconds} s for this token; retry in ${retryAfter} s`);
    error.headers = { ...error.headers, 'retry-after': String(retryAfter) };
    throw error;
  };
}
