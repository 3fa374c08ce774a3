import { CancelledFailure, type Context, type Info } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { describeJobWorkflow } from '../temporal/client/job-workflow.ts';

// How a long job activity stays in touch with its workflow. Temporal tells an
// activity that it is cancelled (or that its workflow is gone) only in the
// answer to a heartbeat, so the activity heartbeats on a timer, also while one
// long step (a COPY, a planning pass) has it waiting; the steps check the
// cancellation signal between them; and before anything becomes permanent the
// activity asks Temporal directly whether this attempt is still the one its
// workflow waits for, since a heartbeat answer may be a second old.

/** Between two heartbeats: the worker's throttle (worker/create-worker.ts) lets one through per second. */
export const HEARTBEAT_EVERY_MS = 1_000;

/** Heartbeats `details()` every `everyMs` until stopped, and at once on `now()` (a step done: the SDK's throttle decides when it is sent). */
export function keepHeartbeating(context: Context, details: () => unknown, everyMs = HEARTBEAT_EVERY_MS): { now(): void; stop(): void } {
  const beat = () => context.heartbeat(details());
  beat();
  const timer = setInterval(beat, everyMs);
  return { now: beat, stop: () => clearInterval(timer) };
}

/** Throws the activity's CancelledFailure once Temporal has cancelled it (or its workflow is gone). */
export function throwIfStopped(context: Context): void {
  context.cancellationSignal.throwIfAborted();
}

/** Why an attempt must not go on: what happened to its workflow, in words for the job's result. */
export type AttemptStanding =
  | { wanted: true }
  /** The operator cancelled or terminated the workflow, or it closed otherwise: the job ends in the error state. */
  | { wanted: false; ending: 'cancelled' | 'terminated' | 'closed'; reason: string }
  /** A newer run (a reset) or a newer attempt owns the job now, or its workflow is gone for the sweep to repair: step aside, record nothing. */
  | { wanted: false; ending: 'superseded'; reason: string };

export type CheckAttempt = (info: Info) => Promise<AttemptStanding>;

/**
 * Asks Temporal where attempt `info` stands: still wanted while its run is
 * the latest, RUNNING, and waiting for this very attempt. Rejects when
 * Temporal cannot be reached: the caller then commits nothing.
 */
export function checkAttemptWith(client: Client): CheckAttempt {
  return async (info) => {
    if (!info.workflowExecution) return { wanted: true };
    const { workflowId, runId } = info.workflowExecution;
    // A busy server may take a while; failing here only costs a retry of the attempt, so wait longer than a status read does.
    const latest = await describeJobWorkflow(client, workflowId, { timeoutMs: 15_000 });
    // Not terminated: gone (its history lost with Temporal's state, or past the namespace's retention). The
    // job is not over: record nothing, and the recovery sweep starts a batch's workflow again (an export's it ends).
    if (!latest)
      return {
        wanted: false,
        ending: 'superseded',
        reason: `its workflow ${workflowId} no longer exists in Temporal; the recovery sweep takes the job up`,
      };
    if (latest.runId !== runId) {
      return { wanted: false, ending: 'superseded', reason: `workflow ${workflowId} was reset or started again (run ${latest.runId})` };
    }
    if (latest.status === 'TERMINATED') return { wanted: false, ending: 'terminated', reason: `its workflow was terminated in Temporal` };
    if (latest.status === 'CANCELLED') return { wanted: false, ending: 'cancelled', reason: `its workflow was cancelled in Temporal` };
    if (latest.closed) return { wanted: false, ending: 'closed', reason: `its workflow ended ${latest.status}` };
    const activity = latest.activity;
    if (latest.cancelRequested || activity?.state === 'CANCEL_REQUESTED')
      return { wanted: false, ending: 'cancelled', reason: `its workflow was cancelled in Temporal` };
    if (!activity || activity.activityId !== info.activityId || activity.attempt !== info.attempt) {
      return { wanted: false, ending: 'superseded', reason: `attempt ${info.attempt} timed out; another attempt owns the job` };
    }
    return { wanted: true };
  };
}

/** Thrown by an attempt that learned it is no longer wanted; the activity reports it as cancelled. */
class AttemptNotWanted extends CancelledFailure {
  readonly standing: Exclude<AttemptStanding, { wanted: true }>;

  constructor(standing: Exclude<AttemptStanding, { wanted: true }>) {
    super(`stopped: ${standing.reason}`);
    this.standing = standing;
  }
}

/**
 * Right before a commit: throws AttemptNotWanted unless Temporal still waits for this attempt. While Temporal
 * cannot be reached, asks again (heartbeats go on meanwhile) for at most `patienceMs`, then rejects: an attempt
 * whose work is done and kept aside (an export's file) would otherwise spend itself, and its job's retries, on an
 * outage. A cancel meanwhile (the heartbeat's answer once Temporal is back) ends the wait.
 */
export async function confirmStillWanted(context: Context, check: CheckAttempt, patienceMs = 0): Promise<void> {
  throwIfStopped(context);
  const standing = await askPatiently(context, check, patienceMs);
  if (!standing.wanted) throw new AttemptNotWanted(standing);
}

/** Between two asks of an unreachable Temporal, at most. */
const ASK_AGAIN_MAX_MS = 15_000;

async function askPatiently(context: Context, check: CheckAttempt, patienceMs: number): Promise<AttemptStanding> {
  const giveUpAt = Date.now() + patienceMs;
  for (let pauseMs = 1_000; ; pauseMs = Math.min(2 * pauseMs, ASK_AGAIN_MAX_MS)) {
    try {
      return await check(context.info);
    } catch (error) {
      if (Date.now() + pauseMs > giveUpAt) throw error;
      context.log.warn('Temporal could not say whether this attempt may commit; asking again', { error: String(error), pauseMs });
      await context.sleep(pauseMs);
      throwIfStopped(context);
    }
  }
}

/**
 * After an attempt stopped because Temporal no longer wants it: waits, at
 * most `timeoutMs`, for the answer to its next heartbeat, which tells the SDK
 * the same. A cancel's answer makes the attempt report as cancelled. For a
 * workflow that is gone (terminated, reset, closed) or an attempt replaced by
 * another, the answer is NotFound: the SDK then knows the server has no use
 * for this attempt's end and does not report it (reported, it would be
 * answered NotFound, and the SDK would log a warning about an attempt that
 * ended exactly as intended).
 */
export async function awaitHeartbeatVerdict(context: Context, timeoutMs = 5_000): Promise<void> {
  if (context.cancellationSignal.aborted) return;
  await Promise.race([context.cancelled.catch(() => undefined), context.sleep(timeoutMs).catch(() => undefined)]);
}

/**
 * After an attempt stopped on an error: whether the job itself was stopped
 * by an operator (and must be recorded as ended), or the attempt merely
 * lost its place (worker shutting down, timed out, superseded). Undefined
 * when Temporal cannot say: then nothing is recorded, and the sweep of
 * stranded jobs looks again later.
 */
export async function whyStopped(
  context: Context,
  error: unknown,
  check: CheckAttempt,
): Promise<Exclude<AttemptStanding, { wanted: true }> | undefined> {
  if (error instanceof AttemptNotWanted) return error.standing;
  if (!context.cancellationSignal.aborted) return undefined;
  try {
    const standing = await check(context.info);
    return standing.wanted ? undefined : standing;
  } catch {
    return undefined;
  }
}
