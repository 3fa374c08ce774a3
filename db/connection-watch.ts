import type pg from 'pg';

// pg-cursor settles nothing more once its connection is gone at some points
// of its exchange (a read that the server's last answer had already ended, a
// close that waits for a reply): a read or a close raced against the end of
// the connection cannot hang the request that waits on it.

/** The end of one checked-out connection, watched from acquisition to release. */
export interface ConnectionWatch {
  /** `step`'s outcome, or a rejection once the connection ends first. */
  settles<T>(step: Promise<T>): Promise<T>;
  /** Whether `step` succeeds before the connection ends (it is not started on an ended one). */
  succeeds(step: () => Promise<unknown>): Promise<boolean>;
  /** Stops watching (before the connection goes back to its pool). */
  stop(): void;
}

export function watchConnection(client: pg.PoolClient): ConnectionWatch {
  let ended = false;
  const waiting = new Set<() => void>();
  const onEnd = () => {
    ended = true;
    for (const wake of waiting) wake();
    waiting.clear();
  };
  client.once('end', onEnd);
  const gone = () => new Error('Connection terminated unexpectedly');
  const settles = <T>(step: Promise<T>): Promise<T> => {
    if (ended) {
      step.catch(() => undefined);
      return Promise.reject(gone());
    }
    return new Promise<T>((resolve, reject) => {
      const wake = () => reject(gone());
      waiting.add(wake);
      step.then(resolve, reject).finally(() => waiting.delete(wake));
    });
  };
  return {
    settles,
    async succeeds(step) {
      if (ended) return false;
      try {
        await settles(step());
        return true;
      } catch {
        return false;
      }
    },
    stop: () => client.off('end', onEnd),
  };
}
