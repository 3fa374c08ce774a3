import createHttpError, { type HttpError } from 'http-errors';
import { ERROR_CODES, type ErrorCode, type ErrorDetail, type ErrorProperties, type ServiceError } from '../services/errors.ts';

// The v2 structured exception: application/problem+json with a stable
// `code`, which is also the real registry's BaseException (type, code,
// message, properties). Every expected failure is raised through `problem()`, so the
// error middleware needs no knowledge of individual routes.

export const PROBLEM_CODES = ERROR_CODES;
export type ProblemCode = ErrorCode;
export type ProblemDetail = ErrorDetail;

/** The one table from a stable code to its HTTP status. */
const STATUS_OF: Readonly<Record<ProblemCode, number>> = {
  EntityNotFound: 404,
  RevisionNotFound: 404,
  BatchNotFound: 404,
  BatchAlreadyExists: 409,
  BatchNotFinished: 409,
  InvalidXml: 400,
  SchemaViolation: 400,
  TooManyChanges: 422,
  TooManyUpdates: 400,
  PageSizeTooLarge: 400,
  TransactionNotFound: 404,
  ExportNotFound: 404,
  ExportNotReady: 409,
  ExportExpired: 410,
  Unauthorized: 401,
  Forbidden: 403,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  NotFound: 404,
  MethodNotAllowed: 405,
  TooManyRequests: 429,
  BadRequest: 400,
  ServiceUnavailable: 503,
  InternalError: 500,
};

/** A use case's typed failure as the problem the API answers. */
export function problemOf(error: ServiceError): ProblemError {
  const mapped = problem(STATUS_OF[error.code], error.code, error.message, error.errors, error.properties);
  // A refusal that knows when to come back (a limit of running jobs, a full budget) says so.
  const retryAfter = error.properties?.retryAfterSeconds;
  if (typeof retryAfter === 'number') mapped.headers = { ...mapped.headers, 'retry-after': String(retryAfter) };
  return mapped;
}

export interface ProblemError extends HttpError {
  code: ProblemCode;
  errors?: ProblemDetail[];
  /** Extra facts for the client (the real BaseException's `properties`), e.g. the transactionId that was not found. */
  properties?: ErrorProperties;
  headers?: Record<string, string>;
}

/** Seconds a client should wait before sending a request refused with 503 again. */
const RETRY_AFTER_SECONDS = '5';

/**
 * Details of 4xx problems, and of 503 (the client's next step), are shown;
 * those of other 5xx stay in the log.
 */
export function problem(
  status: number,
  code: ProblemCode,
  detail: string,
  errors?: ProblemDetail[],
  properties?: ProblemError['properties'],
): ProblemError {
  const headers = status === 503 ? { 'retry-after': RETRY_AFTER_SECONDS } : undefined;
  return createHttpError(status, detail, { code, errors, properties, headers, expose: status < 500 || status === 503 }) as ProblemError;
}

export function isProblem(error: unknown): error is ProblemError {
  return createHttpError.isHttpError(error) && typeof (error as { code?: unknown }).code === 'string';
}
