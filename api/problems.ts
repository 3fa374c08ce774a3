import createHttpError, { type HttpError } from 'http-errors';

// The v2 structured exception: application/problem+json with a stable
// `code`, which is also the real registry's BaseException (type, code,
// message, properties). Every expected failure is raised through `problem()`, so the
// error middleware needs no knowledge of individual routes.

export const PROBLEM_CODES = [
  'EntityNotFound',
  'RevisionNotFound',
  'BatchNotFound',
  'BatchAlreadyExists',
  'BatchNotFinished',
  'InvalidXml',
  'SchemaViolation',
  'TooManyChanges',
  'TooManyUpdates',
  'PageSizeTooLarge',
  'TransactionNotFound',
  'ExportNotFound',
  'ExportNotReady',
  'ExportExpired',
  'Unauthorized',
  'Forbidden',
  'PayloadTooLarge',
  'UnsupportedMediaType',
  'NotFound',
  'MethodNotAllowed',
  'TooManyRequests',
  'BadRequest',
  'ServiceUnavailable',
  'InternalError',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export interface ProblemDetail {
  message: string;
  line?: number;
  column?: number;
  path?: string;
}

export interface ProblemError extends HttpError {
  code: ProblemCode;
  errors?: ProblemDetail[];
  /** Extra facts for the client (the real BaseException's `properties`), e.g. the transactionId that was not found. */
  properties?: Record<string, string | number | boolean>;
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
