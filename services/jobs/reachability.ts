import type { Client } from '@temporalio/client';

// After Temporal failed to answer, status reads through the same client skip
// it for a few seconds and answer from the database at once, instead of each
// waiting for its own timeout while the server is down. A cache of a fact
// about the world, per client: no job state lives here.

const QUIET_AFTER_FAILURE_MS = 5_000;
const lastFailure = new WeakMap<Client, number>();

export const temporalReachability = {
  worthAsking(client: Client, now = Date.now()): boolean {
    return now - (lastFailure.get(client) ?? -Infinity) >= QUIET_AFTER_FAILURE_MS;
  },
  answered(client: Client): void {
    lastFailure.delete(client);
  },
  failed(client: Client, now = Date.now()): void {
    lastFailure.set(client, now);
  },
};
