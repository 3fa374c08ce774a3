import { getHeapSpaceStatistics } from 'node:v8';

/**
 * A diagnostic for measuring the worker's memory (docs/performance.md): with
 * WORKER_MEMORY_LOG_MS set, one line to stderr every that many milliseconds
 * with the process's RSS and what of it V8 and Node account for (MB). Off
 * otherwise. Returns the function that stops it.
 */
export function startMemoryLog(
  intervalMs: number | undefined,
  write: (line: string) => void = (line) => process.stderr.write(line),
): () => void {
  if (intervalMs === undefined || !(intervalMs > 0)) return () => undefined;
  const started = performance.now();
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  const timer = setInterval(() => {
    const usage = process.memoryUsage();
    const spaces = Object.fromEntries(
      getHeapSpaceStatistics().map((space) => [space.space_name.replace(/_space$/, ''), mb(space.space_size)]),
    );
    write(
      `memory pid ${process.pid} ${((performance.now() - started) / 1000).toFixed(1)}s rss ${mb(usage.rss)} heapTotal ${mb(usage.heapTotal)} heapUsed ${mb(usage.heapUsed)} external ${mb(usage.external)} arrayBuffers ${mb(usage.arrayBuffers)} old ${spaces.old} large ${spaces.large_object} new ${spaces.new} code ${spaces.code}\n`,
    );
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
