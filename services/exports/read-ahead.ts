// Reading ahead of a cursor stream: while the rows of one page are being
// written, the next page is already on its way from PostgreSQL, so the
// database's work and the writer's overlap instead of taking turns.

/**
 * Yields what `source` yields, pulling up to `limit` items ahead of the
 * consumer. Stopping early (return or throw in the consumer) stops the
 * source too, which closes its cursor.
 */
export async function* readAhead<T>(source: AsyncIterable<T>, limit: number): AsyncGenerator<T> {
  let buffer: T[] = [];
  let finished = false;
  let failed = false;
  let failure: unknown;
  let stopped = false;
  let wakeConsumer: (() => void) | undefined;
  let wakeProducer: (() => void) | undefined;

  const producer = (async () => {
    try {
      for await (const item of source) {
        buffer.push(item);
        wakeConsumer?.();
        while (buffer.length >= limit && !stopped) await new Promise<void>((resolve) => (wakeProducer = resolve));
        if (stopped) break;
      }
    } catch (error) {
      failed = true;
      failure = error;
    } finally {
      finished = true;
      wakeConsumer?.();
    }
  })();

  try {
    for (;;) {
      if (buffer.length > 0) {
        const batch = buffer;
        buffer = [];
        wakeProducer?.();
        for (const item of batch) {
          yield item;
          // A consumer that never waits for I/O would hold the source's replies in the
          // socket until the whole batch is done; this lets them in between items.
          await ioTurn();
        }
        continue;
      }
      if (failed) throw failure;
      if (finished) return;
      await new Promise<void>((resolve) => (wakeConsumer = resolve));
      wakeConsumer = undefined;
    }
  } finally {
    stopped = true;
    wakeProducer?.();
    await producer;
  }
}

/** Resolves after the event loop has polled for I/O once. */
function ioTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
