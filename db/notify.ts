import pg from 'pg';
import type { Queryable } from './sql.ts';

// Commits told to the API processes: the apply path NOTIFYs on one channel in
// the transaction that commits a batch (PostgreSQL delivers it at COMMIT, and
// never for a rollback); each API process LISTENs on one connection of its
// own and fans the news out to its push-stream clients. The payload is only
// the transaction's seq: clients read what changed from the feed, by
// position, so a notification lost or late costs latency, never a change.

const CHANNEL = 'ers_commit';
/** Waits before listening again after the connection failed: doubling, at most this. */
const MOST_RECONNECT_MS = 10_000;

/** Tells the API processes, at COMMIT, that the batch's transaction committed. */
export async function notifyCommit(client: Queryable, batchId: string): Promise<void> {
  await client.query(`select pg_notify('${CHANNEL}', (select seq::text from transaction where batch_id = $1))`, [batchId]);
}

export interface CommitNotifications {
  /**
   * Calls `wake` after each commit, and after the listening connection was
   * lost and is back (commits may have been missed meanwhile). Listens from
   * the first subscriber on. Returns the unsubscribe.
   */
  subscribe(wake: () => void): () => void;
  /** Subscribers now, for the metrics and the tests. */
  readonly subscribers: number;
  /** Once closed (the process stops): subscribers are woken a last time and should end. */
  readonly closed: boolean;
  close(): Promise<void>;
}

export function commitNotifications(pool: pg.Pool, log: { warn(object: object, message: string): void }): CommitNotifications {
  const wakes = new Set<() => void>();
  let client: pg.Client | undefined;
  let closed = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  const wakeAll = () => {
    for (const wake of wakes) wake();
  };

  const listen = async (): Promise<void> => {
    const connection = new pg.Client(pool.options);
    client = connection;
    connection.on('notification', wakeAll);
    connection.on('error', (error) => {
      log.warn({ err: error }, 'the commit listener lost its connection; listening again');
      void reconnect(connection);
    });
    try {
      await connection.connect();
      await connection.query(`listen ${CHANNEL}`);
      if (failures > 0) wakeAll();
      failures = 0;
    } catch (error) {
      log.warn({ err: error }, 'the commit listener could not listen; trying again');
      await reconnect(connection);
    }
  };

  const reconnect = async (connection: pg.Client): Promise<void> => {
    if (client !== connection) return;
    client = undefined;
    failures += 1;
    await connection.end().catch(() => undefined);
    if (closed) return;
    retry = setTimeout(
      () => {
        retry = undefined;
        void listen();
      },
      Math.min(MOST_RECONNECT_MS, 100 * 2 ** failures),
    );
    retry.unref();
  };

  return {
    subscribe(wake) {
      wakes.add(wake);
      if (client === undefined && retry === undefined && !closed) void listen();
      return () => wakes.delete(wake);
    },
    get subscribers() {
      return wakes.size;
    },
    get closed() {
      return closed;
    },
    async close() {
      if (closed) return;
      closed = true;
      wakeAll();
      clearTimeout(retry);
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
  };
}
