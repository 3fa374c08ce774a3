import type { Middleware } from 'koa';
import { DomainError, InvalidXmlError, SchemaViolationError } from '../../domain/errors.ts';
import { ServiceError } from '../../services/errors.ts';
import { isDatabaseBusy } from '../../services/limits/long-reads.ts';
import { isProblem, problem, problemOf, type ProblemCode, type ProblemError } from '../problems.ts';

/**
 * The one place where failures become responses: typed problems keep their
 * status and code; domain errors are mapped by class; anything else is a 500
 * whose message stays in the log.
 */
export function errorHandler(): Middleware {
  return async function errorHandlerMiddleware(ctx, next) {
    try {
      await next();
      if (ctx.body === undefined) {
        if (ctx.status === 404) throw problem(404, 'NotFound', `no route for ${ctx.method} ${ctx.path}`);
        // The router answered a known path with a method it does not serve (501: one no route serves) and set Allow.
        if (ctx.status === 405 || ctx.status === 501)
          throw problem(405, 'MethodNotAllowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('allow')}`);
      }
    } catch (error) {
      const mapped = toProblem(error);
      if (mapped.status >= 500) ctx.state.log?.error({ err: error }, 'request failed');
      else ctx.state.log?.debug({ err: error }, 'request rejected');
      ctx.status = mapped.status;
      for (const [name, value] of Object.entries(mapped.headers ?? {})) ctx.set(name, value);
      ctx.type = 'application/problem+json';
      const detail = mapped.expose ? mapped.message : 'internal error; see the server log for this request id';
      ctx.body = {
        type: `urn:entity-records:problem:${mapped.code}`,
        title: mapped.code,
        status: mapped.status,
        detail,
        code: mapped.code,
        // The real BaseException reads `message` and `properties`; its generated model has no field for the rest, but reads them leniently.
        message: detail,
        requestId: ctx.state.requestId,
        ...(mapped.errors ? { errors: mapped.errors } : {}),
        ...(mapped.properties ? { properties: mapped.properties } : {}),
        // The one fact the real client reads at the top level too (its ErrorTransactionNotFound); the Problem schema lists it.
        ...(mapped.properties?.transactionId !== undefined ? { transactionId: mapped.properties.transactionId } : {}),
      };
    }
  };
}

function toProblem(error: unknown): ProblemError {
  if (isProblem(error)) return error;
  if (error instanceof ServiceError) return problemOf(error);
  if (error instanceof InvalidXmlError) return problem(400, 'InvalidXml', error.message, error.problems);
  if (error instanceof SchemaViolationError) return problem(400, 'SchemaViolation', error.message, error.problems);
  if (error instanceof DomainError) return problem(400, 'BadRequest', error.message);
  // A pool with no connection to give in DB_ACQUIRE_TIMEOUT_MS, or a long read past its statement timeout: 503 with Retry-After, never a hang.
  if (isDatabaseBusy(error)) return problem(503, 'ServiceUnavailable', 'the database is busy; retry shortly');
  const status = (error as { status?: unknown }).status;
  // Errors raised by Koa, the router and raw-body (body too large, bad JSON,
  // aborted upload, unknown method) carry a status of their own.
  if (typeof status === 'number' && ((status >= 400 && status < 500) || status === 501)) {
    const message = (error as Error).message;
    const code = GENERIC_CODES[status] ?? 'BadRequest';
    return problem(status === 501 ? 405 : status, code, message);
  }
  return problem(500, 'InternalError', 'internal error');
}

const GENERIC_CODES: Record<number, ProblemCode> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  501: 'MethodNotAllowed',
};
