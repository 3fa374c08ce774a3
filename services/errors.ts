// The failures a use case reports to its caller, each with a stable code.
// Services know no HTTP: api/problems.ts maps every code to its status in
// one table, and the CLI matches on the same codes.

export const ERROR_CODES = [
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
export type ErrorCode = (typeof ERROR_CODES)[number];

/** One of several problems (an XML error with its position, an invalid field with its path). */
export interface ErrorDetail {
  message: string;
  line?: number;
  column?: number;
  path?: string;
}

/** Extra facts a client may act on (the real BaseException's `properties`), e.g. the transactionId that was not found. */
export type ErrorProperties = Record<string, string | number | boolean>;

export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly code: ErrorCode;
  readonly errors: ErrorDetail[] | undefined;
  readonly properties: ErrorProperties | undefined;

  constructor(code: ErrorCode, message: string, errors?: ErrorDetail[], properties?: ErrorProperties) {
    super(message);
    this.code = code;
    this.errors = errors;
    this.properties = properties;
  }
}
