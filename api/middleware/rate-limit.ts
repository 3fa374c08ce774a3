import type { Middleware } from 'koa';
import ratelimit from 'koa-ratelimit';
import type { Config } from '../../config.ts';
import { problem } from '../problems.ts';

// One counter per token across every submission route (batches, test
// batches, exports, v1 and v2): a client cannot double its allowance by
// switching routes. Counters live in this process, so N APIs allow N times
// the limit in all; docs/decisions.md says so.
const countersByConfig = new WeakMap<Config, Map<string, unknown>>();

/**
 * Route guard for submissions, placed after requirePermission: at most
 * SUBMISSION_RATE_LIMIT per token in SUBMISSION_RATE_WINDOW_SECONDS, beyond
 * that 429 TooManyRequests with Retry-After. A limit of 0 turns it off.
 */
export function limitSubmissions(config: Config): Middleware {
  const max = config.SUBMISSION_RATE_LIMIT;
  if (max === 0) return (_ctx, next) => next();
  let counters = countersByConfig.get(config);
  if (!counters) countersByConfig.set(config, (counters = new Map()));
  const limiter = ratelimit({
    driver: 'memory',
    db: counters,
    namespace: 'submissions',
    duration: config.SUBMISSION_RATE_WINDOW_SECONDS * 1000,
    max,
    id: (ctx) => String(ctx.state.principal.name),
  });
  return async function limitSubmissionsMiddleware(ctx, next) {
    await limiter(ctx, next);
    const limited = ctx.state.rateLimit as { after: number } | undefined;
    if (!limited) return;
    const retryAfter = Math.max(1, Math.ceil(limited.after));
    const error = problem(
      429,
      'TooManyRequests',
      `more than ${max} submissions in ${config.SUBMISSION_RATE_WINDOW_SECONDS} s for this token; retry in ${retryAfter} s`,
    );
    error.headers = { ...error.headers, 'retry-after': String(retryAfter) };
    throw error;
  };
}
