import { ApplicationFailure } from '@temporalio/activity';

// Which PostgreSQL errors of an apply are worth another attempt. The apply
// is one transaction over a snapshot; an error the same body would raise
// again on any snapshot is deterministic, and retrying it only holds a slot
// and a connection for hours. An error of the moment (a serialization or
// deadlock victim, a cancelled statement, a connection lost) is retried.

/** How many attempts a unique violation is retried: a concurrent batch that committed the same key is visible to the next one. */
const UNIQUE_VIOLATION_ATTEMPTS = 2;

/** The SQLSTATE of a PostgreSQL error anywhere in `error`'s cause chain. */
export function sqlState(error: unknown): string | undefined {
  for (
    let current = error, depth = 0;
    current && typeof current === 'object' && depth < 8;
    current = (current as { cause?: unknown }).cause, depth += 1
  ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Whether an apply that failed with `error` on attempt `attempt` fails for
 * good: data exceptions (class 22) and integrity violations (class 23) at
 * once; a unique violation (23505) only once it repeats on a later attempt,
 * whose snapshot sees whatever concurrent batch committed the key first.
 * Serialization failures (40001), deadlocks (40P01), cancelled statements
 * (57014) and everything else are retried.
 */
export function isDeterministicSqlError(error: unknown, attempt: number): boolean {
  const state = sqlState(error);
  if (state === undefined) return false;
  if (state === '23505') return attempt >= UNIQUE_VIOLATION_ATTEMPTS;
  return state.startsWith('22') || state.startsWith('23');
}

/** The non-retryable failure an activity throws for a deterministic SQL error. */
export function deterministicSqlFailure(error: unknown, what: string): ApplicationFailure {
  const message = error instanceof Error ? error.message : String(error);
  return ApplicationFailure.create({
    message: `${what}: ${message} (SQLSTATE ${sqlState(error)}; it would fail the same way again)`,
    type: 'DeterministicSqlError',
    nonRetryable: true,
    cause: error instanceof Error ? error : undefined,
  });
}
