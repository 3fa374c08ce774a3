// A repository on a standby whose calls run again on the primary when the
// standby fails them: a promise that rejects, or a stream that fails before
// its first rows (after them the caller has sent part of an answer, so the
// error stands; hot_standby_feedback keeps replay from cancelling such reads,
// docs/decisions/0192).

export function withFallback<T extends object>(
  onStandby: T,
  onPrimary: T,
  standbyFailure: (error: unknown) => boolean,
  down: () => void,
): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(onStandby)) {
    if (typeof value !== 'function') {
      wrapped[name] = value;
      continue;
    }
    const again = (onPrimary as Record<string, (...args: unknown[]) => unknown>)[name]!.bind(onPrimary);
    wrapped[name] = (...args: unknown[]) => {
      const result: unknown = value.apply(onStandby, args);
      if (isAsyncGenerator(result))
        return streamWithFallback(result, () => again(...args) as AsyncGenerator<unknown>, standbyFailure, down);
      if (result instanceof Promise)
        return result.catch((error: unknown) => {
          if (!standbyFailure(error)) throw error;
          down();
          return again(...args);
        });
      return result;
    };
  }
  return wrapped as T;
}

async function* streamWithFallback<T>(
  stream: AsyncGenerator<T>,
  again: () => AsyncGenerator<T>,
  standbyFailure: (error: unknown) => boolean,
  down: () => void,
): AsyncGenerator<T> {
  let first: IteratorResult<T>;
  try {
    first = await stream.next();
  } catch (error) {
    if (!standbyFailure(error)) throw error;
    down();
    yield* again();
    return;
  }
  if (first.done) return;
  yield first.value;
  try {
    yield* stream;
  } catch (error) {
    // Part of the answer is out: the error stands, but the next reads go elsewhere.
    if (standbyFailure(error)) down();
    throw error;
  }
}

function isAsyncGenerator(value: unknown): value is AsyncGenerator<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncGenerator<unknown>).next === 'function' &&
    Symbol.asyncIterator in value
  );
}
