// Failures that say the database is busy rather than broken: the pool had no
// connection to give within its acquire timeout (node-postgres' own message),
// or a statement ran past its statement_timeout (SQLSTATE 57014). The API
// answers both with 503 and Retry-After: the next try may well succeed.

const ACQUIRE_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';
const QUERY_CANCELED = '57014';

export function isDatabaseBusy(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.message === ACQUIRE_TIMEOUT_MESSAGE || (error as { code?: unknown }).code === QUERY_CANCELED;
}
