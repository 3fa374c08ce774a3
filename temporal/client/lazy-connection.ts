import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { temporalClientOptions } from './connection.ts';

// The SDK's gRPC retry interceptor schedules a failed call's retry with a
// timer that Connection.close() does not clear: a retry falling due after
// the close throws "Channel has been shut down" inside that timer, uncaught,
// and ends the process (seen when an API or worker stopped while Temporal
// was away). This connection stops retrying once it is closing, and closes
// once the last retry already scheduled has started.

/** A little after a retry's due time: its timer has fired and its call has started. */
const AFTER_DUE_MS = 50;

export interface LazyClientConnection {
  readonly connection: Connection;
  /** Closes the connection once no retry is scheduled (at most one retry interval, about 6 s); failed calls are not retried meanwhile. */
  close(): Promise<void>;
}

/** A lazy client connection (`Connection.lazy`) to the Temporal of `config`, with the SDK's retries, that closes without crashing its process. */
export function lazyClientConnection(config: Parameters<typeof temporalClientOptions>[0]): LazyClientConnection {
  const defaults = defaultGrpcRetryOptions();
  let closing = false;
  let lastRetryDue = 0;
  const retries = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !closing && defaults.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const delay = defaults.delayFunction(attempt, status);
      lastRetryDue = Math.max(lastRetryDue, Date.now() + delay);
      return delay;
    },
  });
  const connection = Connection.lazy({ ...temporalClientOptions(config), interceptors: [retries] });
  return {
    connection,
    async close() {
      closing = true;
      const untilDue = lastRetryDue - Date.now();
      if (untilDue > 0) await sleep(untilDue + AFTER_DUE_MS);
      await connection.close();
    },
  };
}
