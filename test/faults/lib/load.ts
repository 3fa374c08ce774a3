import { loadavg } from 'node:os';

/** The machine's 1-minute load average, for figures that depend on it. */
export function loadAverage(): string {
  return loadavg()[0]!.toFixed(1);
}
