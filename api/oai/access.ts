import type { Middleware } from 'koa';
import { LongReadLimiter, type LongReadLease } from '../../services/limits/long-reads.ts';
import { clientAddress } from '../client-address.ts';
import type { AppDeps } from '../deps.ts';
import { countAnonymousRead } from '../middleware/anonymous-limit.ts';
import { hasPermission } from '../middleware/auth.ts';
import { cutWhenStalled } from '../middleware/long-reads.ts';
import { problem } from '../problems.ts';

// Who may harvest /oai and how much at once (docs/decisions/0136). OAI_PMH:
// public (anonymous harvesters limited per address), bearer (a principal with
// read), off (mounted by nobody: see buildApp). Every OAI request is a long
// read: it holds a lease (PostgreSQL, shared by every API process) of its
// principal's LONG_READS_PER_PRINCIPAL, or, anonymous, one of its address's
// OAI_ANONYMOUS_PER_ADDRESS and one of OAI_ANONYMOUS_TOTAL for all anonymous
// harvesters together, until its answer is written or cut; an answer that
// sends nothing for LONG_READ_STALL_SECONDS or runs past
// LONG_READ_MAX_SECONDS is cut. A refusal is OAI-PMH's flow control: 503
// with Retry-After.

/** What a refused harvester is told to wait: about one page's time. */
const RETRY_AFTER_SECONDS = 2;
/** The lease key of all anonymous harvesters together. */
const ANONYMOUS_HARVESTERS = 'oai-anonymous';

export function oaiAccess(deps: Pick<AppDeps, 'config' | 'db' | 'log'>): Middleware {
  const { config } = deps;
  const limiter = (perPrincipal: number) =>
    new LongReadLimiter(deps.db, { perPrincipal, leaseSeconds: config.LONG_READ_LEASE_SECONDS }, deps.log);
  const perPrincipal = limiter(config.LONG_READS_PER_PRINCIPAL);
  const perAddress = limiter(config.OAI_ANONYMOUS_PER_ADDRESS);
  const anonymousTotal = limiter(config.OAI_ANONYMOUS_TOTAL);

  return async function oaiAccessMiddleware(ctx, next) {
    const principal = ctx.state.principal;
    if (config.OAI_PMH === 'bearer' && principal === undefined) {
      const refused = problem(
        401,
        'Unauthorized',
        'this repository is harvested with a token: send "Authorization: Bearer <token>" (or sign the request with an API key)',
      );
      refused.headers = { 'WWW-Authenticate': 'Bearer realm="entity-records"' };
      throw refused;
    }
    if (principal !== undefined && !hasPermission(principal, 'read'))
      throw problem(403, 'Forbidden', "harvesting needs the 'read' permission");
    const verdict = await countAnonymousRead(deps, ctx);
    if (!verdict.allowed) throw busy(`too many requests from this address; retry in ${verdict.retryAfter} s`, verdict.retryAfter);

    const leases: LongReadLease[] = [];
    const releaseAll = () => leases.forEach((lease) => lease.release());
    try {
      if (principal !== undefined) {
        leases.push(
          (await perPrincipal.take(String(principal.name))) ??
            refuse(`this principal already runs ${config.LONG_READS_PER_PRINCIPAL} long reads (harvests, feed pages, exports) at once`),
        );
      } else {
        leases.push(
          (await perAddress.take(`${ANONYMOUS_HARVESTERS}:${clientAddress(ctx)}`)) ??
            refuse(`this address already runs ${config.OAI_ANONYMOUS_PER_ADDRESS} OAI-PMH requests at once`),
        );
        leases.push(
          (await anonymousTotal.take(ANONYMOUS_HARVESTERS)) ??
            refuse(`${config.OAI_ANONYMOUS_TOTAL} anonymous OAI-PMH requests are running; harvest later or with a token`),
        );
      }
    } catch (error) {
      releaseAll();
      throw error;
    }
    // 'close' comes once the answer is written, cut, or abandoned by the client: whatever happens next.
    ctx.res.once('close', releaseAll);
    await next();
    cutWhenStalled(ctx, config.LONG_READ_STALL_SECONDS * 1000, config.LONG_READ_MAX_SECONDS * 1000);
  };
}

function refuse(message: string): never {
  throw busy(message, RETRY_AFTER_SECONDS);
}

/** OAI-PMH's flow control: harvesters wait Retry-After seconds and ask again. */
function busy(message: string, retryAfter: number) {
  const refused = problem(503, 'TooManyRequests', message);
  refused.headers = { 'retry-after': String(retryAfter) };
  return refused;
}
