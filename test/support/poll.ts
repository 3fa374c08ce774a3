// Bounded waiting, the one poll loop of the vitest tests and the fault
// suite: every loop ends by a deadline and an iteration cap, and says what
// it was waiting for when it gives up. Imports nothing of vitest, so the
// fault suite (plain node) uses it too.

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Thrown by a probe to stop polling at once (other errors are retried until the deadline). */
export class GiveUp extends Error {}

export interface PollOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Says what did not happen, for the error. */
  what: string;
  /**
   * Whether an error of the probe is retried until the deadline (the fault
   * suite's default: a service restarting under a fault) or thrown at once
   * (a vitest test: a failed expect() is the failure to report).
   */
  retryErrors?: boolean;
}

/** Calls `probe` until it returns something other than undefined; throws after the deadline. */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, options: PollOptions): Promise<T> {
  const interval = options.intervalMs ?? 250;
  const deadline = Date.now() + options.timeoutMs;
  const maxRounds = Math.ceil(options.timeoutMs / interval) + 1;
  let lastError: unknown;
  for (let round = 0; round < maxRounds && Date.now() <= deadline; round += 1) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (error) {
      if (error instanceof GiveUp || options.retryErrors === false) throw error;
      lastError = error;
    }
    await sleep(interval);
  }
  const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`timed out after ${(options.timeoutMs / 1000).toFixed(0)} s waiting for ${options.what}${cause}`);
}

/** pollUntil as the vitest tests use it: every 100 ms, an error of `check` fails at once. */
export function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 30_000, what = 'the condition'): Promise<T> {
  return pollUntil(check, { timeoutMs, intervalMs: 100, what, retryErrors: false });
}

/**
 * Runs `tick` every `intervalMs` in the background until stop() (or the
 * safety cap on rounds); stop() resolves after the last tick has finished.
 */
export function every(intervalMs: number, tick: () => Promise<void>, maxMs = 30 * 60_000): { stop(): Promise<void> } {
  let stopped = false;
  const maxRounds = Math.ceil(maxMs / intervalMs);
  const loop = (async () => {
    for (let round = 0; round < maxRounds && !stopped; round += 1) {
      const started = Date.now();
      await tick();
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}
