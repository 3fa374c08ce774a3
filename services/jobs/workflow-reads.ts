import type { Client } from '@temporalio/client';
import { describeJobWorkflow, type JobWorkflowState } from '../../temporal/client/job-workflow.ts';
import { temporalReachability } from './reachability.ts';

// What status and detail reads learn from Temporal about a running job, asked
// once for all of them: clients poll the status of a running batch in tight
// loops, and a describe per poll would load Temporal with them. Reads of one job in the same
// moment share one describe in flight; its answer serves the reads of the
// next JOB_STATUS_CACHE_MS, and for as long again while a describe in the
// background renews it (so no poll waits for Temporal once the job's first
// answer is in, and no answer served is older than twice the interval).
// Describes of one job are thus at least an interval apart, however many
// clients poll it. A cache per API process and Temporal client, of answers
// Temporal gives anyway: each process asks on its own, and nothing here is
// job state (the row and the workflow stay the truth).
//
// Entries expire; the map holds at most the jobs read within the last two
// intervals (and never more than MAX_ENTRIES), so memory does not grow with
// the number of jobs ever polled.

/** What one read got: Temporal's answer (undefined state: no such workflow), or undefined when Temporal could not be asked. */
export type WorkflowAnswer = { state: JobWorkflowState | undefined } | undefined;

/** How a read was answered: by a describe of its own, by one in flight, by a recent answer, or by an older one while a describe renews it. */
export type WorkflowReadAnswer = 'describe' | 'shared' | 'cached' | 'stale';

export interface WorkflowReadOptions {
  /** Bound on the describe, when this read sends one. */
  timeoutMs: number;
  /**
   * Whether a finished earlier answer may serve this read. A read that knows
   * more than that answer (the row says the job ended, the answer says its
   * workflow runs) asks again.
   */
  usable?: (state: JobWorkflowState | undefined) => boolean;
}

/** Jobs whose answers one process keeps at most, should thousands be polled within one interval. */
const MAX_ENTRIES = 10_000;

interface Entry {
  /** Temporal's last answer about the job, and when it was asked for. */
  last?: { state: JobWorkflowState | undefined; askedAt: number };
  /** The describe in flight, if any. */
  asking?: Promise<WorkflowAnswer>;
  /** When the latest describe was sent: the map is in this order. */
  sentAt: number;
}

export class WorkflowReads {
  private readonly entries = new Map<string, Entry>();
  /** Reads by how they were answered, for the API's metrics. */
  readonly counts: Record<WorkflowReadAnswer, number> = { describe: 0, shared: 0, cached: 0, stale: 0 };
  private readonly client: Client;
  private readonly reuseMs: number;
  private readonly now: () => number;
  private readonly describeWorkflow: typeof describeJobWorkflow;

  /** `seams` are for tests: the clock and the describe. */
  constructor(client: Client, reuseMs: number, seams: { now?: () => number; describe?: typeof describeJobWorkflow } = {}) {
    this.client = client;
    this.reuseMs = reuseMs;
    this.now = seams.now ?? (() => performance.now());
    this.describeWorkflow = seams.describe ?? describeJobWorkflow;
  }

  /**
   * What Temporal says about job `id`'s workflow. An answer younger than the
   * interval serves at once. One up to twice as old serves at once too, while
   * a describe in the background renews it, so that polls never queue behind
   * Temporal. Otherwise the read waits for the describe in flight, or sends
   * one.
   */
  read(id: string, options: WorkflowReadOptions): Promise<WorkflowAnswer> {
    const now = this.now();
    this.sweep(now);
    const entry = this.entries.get(id);
    const last = entry?.last;
    if (entry && last && (options.usable?.(last.state) ?? true)) {
      const age = now - last.askedAt;
      if (age < this.reuseMs) {
        this.counts.cached += 1;
        return Promise.resolve({ state: last.state });
      }
      if (age < 2 * this.reuseMs) {
        if (!entry.asking && temporalReachability.worthAsking(this.client)) void this.ask(id, entry, options.timeoutMs, now);
        this.counts.stale += 1;
        return Promise.resolve({ state: last.state });
      }
    }
    if (entry?.asking) {
      this.counts.shared += 1;
      return entry.asking;
    }
    // After Temporal failed to answer, the row answers for a while without asking (reachability.ts).
    if (!temporalReachability.worthAsking(this.client)) return Promise.resolve(undefined);
    return this.ask(id, entry ?? { sentAt: now }, options.timeoutMs, now);
  }

  /** Number of jobs with an answer kept or a describe in flight. */
  get size(): number {
    return this.entries.size;
  }

  private ask(id: string, entry: Entry, timeoutMs: number, now: number): Promise<WorkflowAnswer> {
    this.counts.describe += 1;
    entry.sentAt = now;
    entry.asking = this.describeWorkflow(this.client, id, { timeoutMs }).then(
      (state) => {
        temporalReachability.answered(this.client);
        entry.last = { state, askedAt: now };
        entry.asking = undefined;
        if (this.reuseMs <= 0) this.drop(id, entry);
        return { state };
      },
      () => {
        // Not kept: the next read asks again, unless reachability says Temporal is down.
        temporalReachability.failed(this.client);
        entry.asking = undefined;
        if (!entry.last) this.drop(id, entry);
        return undefined;
      },
    );
    // To the end of the map, which is in the order of sending.
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return entry.asking;
  }

  /** Drops answers too old to serve from the front of the map (the oldest describes), up to the first still of use. */
  private sweep(now: number): void {
    for (const [id, entry] of this.entries) {
      if (now - entry.sentAt < 2 * this.reuseMs) return;
      // A describe still in flight keeps its entry until it answers.
      if (!entry.asking) this.entries.delete(id);
    }
  }

  private drop(id: string, entry: Entry): void {
    if (this.entries.get(id) === entry) this.entries.delete(id);
  }
}

const perClient = new WeakMap<Client, WorkflowReads>();

/** The workflow reads of Temporal client `client` in this process (made on first use, with `reuseMs` from the config). */
export function workflowReads(client: Client, reuseMs: number): WorkflowReads {
  let reads = perClient.get(client);
  if (!reads) {
    reads = new WorkflowReads(client, reuseMs);
    perClient.set(client, reads);
  }
  return reads;
}
