import { endOfCommit } from '../../db/activity-stream.ts';
import type { Db } from '../../db/index.ts';
import { activityDocument, type StreamUrls } from '../../domain/activity-streams/documents.ts';
import type { StreamPosition } from '../../domain/activity-streams/position.ts';
import type { Logger } from '../../logger.ts';
import { ServiceError } from '../errors.ts';

// The push stream (GET /api/v2/stream): one Server-Sent Event per committed
// transaction, in commit order, its data the transaction's activities (one
// JSON line each, as on the Activity Streams pages), its id the transaction's
// UUID. A connection keeps only its position; it reads the activity log from
// there (db/activity-stream.ts: any snapshot sees a prefix of commit order,
// so whatever it reads is final and nothing can later land before it), and
// waits for the process's one commit listener (db/notify.ts) to wake it.
// The event's id is written last, so a client cut inside an event resumes
// from the one before and gets the whole transaction again.

/** Where the events go: the response, as the service sees it. */
export interface EventSink {
  write(text: string): void;
  /** True once little enough is buffered; false when the consumer did not read for too long (then it is cut). */
  drained(): Promise<boolean>;
  /** Ends the connection at once (the client reconnects with Last-Event-ID). */
  cut(why: string): void;
  /** Ends the response cleanly. */
  end(): void;
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

export interface PushOptions {
  urls: StreamUrls;
  /** Activities read at a time: what a connection holds in memory. */
  chunk: number;
  heartbeatMs: number;
  /** A connection ends after this (its client reconnects, maybe to another process). */
  maxMs: number;
  /** After maxMs, how long its end may take (a last read, a consumer taking the last bytes) before it is cut. */
  endGraceMs: number;
}

/** Where a stream starts: after the transaction Last-Event-ID (or `from`) names, else after the latest commit. */
export async function streamStart(db: Pick<Db, 'feed' | 'activityStream'>, after: string | undefined): Promise<StreamPosition> {
  if (after === undefined) return endOfCommit(await db.activityStream.latestCommitSeq());
  const transaction = await db.feed.findTransaction(after);
  if (!transaction) throw new ServiceError('TransactionNotFound', `no committed transaction ${after}`, undefined, { transactionId: after });
  return endOfCommit(transaction.commitSeq);
}

/** Sends every commit after `start` as it happens, until the client leaves, is cut, or the process stops. */
export async function pushCommits(
  deps: { db: Pick<Db, 'activityStream' | 'commits'>; log: Logger },
  sink: EventSink,
  start: StreamPosition,
  options: PushOptions,
): Promise<void> {
  const { db } = deps;
  let position: StreamPosition | undefined = start;
  let woken = true;
  let idle = false;
  let wake: (() => void) | undefined;
  const unsubscribe = db.commits.subscribe(() => {
    woken = true;
    wake?.();
  });
  sink.onClose(() => wake?.());
  // A comment line: keeps proxies from closing a quiet connection; written only between events.
  const heartbeat = setInterval(() => idle && sink.write(': heartbeat\n\n'), options.heartbeatMs);
  // A timer may fire a millisecond before Date.now() reaches endsAt: the flag, not the clock, ends a wait.
  let pastEnd = false;
  const ended = setTimeout(() => {
    pastEnd = true;
    wake?.();
  }, options.maxMs);
  // Whatever the loop is waiting on by then (a read that does not return, a wake that never comes), the
  // connection ends, and with it the slots it holds.
  const overdue = setTimeout(() => {
    if (sink.closed) return;
    deps.log.warn({ idle, maxMs: options.maxMs }, 'a push stream outlived its end; cut');
    sink.cut('past its end');
  }, options.maxMs + options.endGraceMs);
  const endsAt = Date.now() + options.maxMs;
  try {
    while (position && !sink.closed && !db.commits.closed && !pastEnd && Date.now() < endsAt) {
      if (!woken) {
        idle = true;
        await new Promise<void>((resolve) => (wake = resolve));
        idle = false;
        wake = undefined;
        continue;
      }
      woken = false;
      position = await sendAfter(db, sink, position, options, endsAt);
    }
    if (!sink.closed) sink.end();
  } catch (error) {
    deps.log.warn({ err: error }, 'a push stream failed; its client resumes with Last-Event-ID');
    sink.cut('failed');
  } finally {
    clearInterval(heartbeat);
    clearTimeout(ended);
    clearTimeout(overdue);
    unsubscribe();
  }
}

/**
 * Every committed activity after `position` as events, or those read by `endsAt`; the new position, or undefined when
 * the consumer was cut.
 */
async function sendAfter(
  db: Pick<Db, 'activityStream'>,
  sink: EventSink,
  position: StreamPosition,
  options: PushOptions,
  endsAt: number,
): Promise<StreamPosition | undefined> {
  let open: { commitSeq: string; transaction: string } | undefined;
  for (;;) {
    if (sink.closed) return undefined;
    const activities = await db.activityStream.activitiesAfter(position, options.chunk);
    for (const activity of activities) {
      if (open?.commitSeq !== activity.position.commitSeq) {
        if (open) sink.write(`id: ${open.transaction}\n\n`);
        open = { commitSeq: activity.position.commitSeq, transaction: activity.transaction };
        sink.write('event: commit\n');
      }
      sink.write(`data: ${JSON.stringify(activityDocument(options.urls, activity))}\n`);
    }
    if (activities.length > 0) position = activities.at(-1)!.position;
    // Fewer than asked: all that is committed has been read, and a transaction is visible whole.
    const caughtUp = activities.length < options.chunk;
    if (caughtUp && open) sink.write(`id: ${open.transaction}\n\n`);
    if (!(await sink.drained())) {
      sink.cut('slow consumer');
      return undefined;
    }
    if (caughtUp) return position;
    // A long backlog, or one that grows as fast as it is read, does not keep the connection past its end: the client
    // resumes from the last whole event it got (an event cut short has no id and is dropped).
    if (Date.now() >= endsAt) return position;
  }
}
