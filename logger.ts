import { pino, type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /**
   * Collect lines and write them at least every this many milliseconds (or
   * once 4 KB are waiting), instead of one write per line: the API logs a
   * line per request, and a write of its own per line cost a system call and
   * a thread-pool round trip per request (docs/performance.md). Pino writes
   * what is waiting when the process exits.
   */
  flushEveryMs?: number;
}

export function createLogger(level: string, name: string, options: LoggerOptions = {}): Logger {
  if (options.flushEveryMs === undefined) return pino({ level, name });
  return pino({ level, name }, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: options.flushEveryMs }));
}
