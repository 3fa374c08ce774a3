import { randomUUID } from 'node:crypto';
import { BATCH_PIPELINE, computeForceKey, forceKeyMatches, type PlannedRecord } from '../../domain/batch/index.ts';
import { IssueLog, hasSeverity } from '../../domain/batch/issues.ts';
import {
  BatchPlanner,
  BatchSurvey,
  createGroupedWorld,
  refOf,
  scanBatchSurvey,
  type SurveyScanSummary,
  type SurveySink,
} from '../../engine/batch/index.ts';
import { encodeStagedEntries, encodeResultLines, type ApplyTransaction, type StepLoad } from '../../db/apply/index.ts';
import type { CopyLoad } from '../../db/copy.ts';
import {
  BATCH_ISSUE_CODES,
  type BatchFailure,
  type BatchHeader,
  type BatchResult,
  type ChangeCommand,
  type EntityIssues,
  type EntityRef,
} from '../../domain/model.ts';
import { readBatchInGroups, type BatchReadSummary } from '../../domain/xml/batch-reader.ts';
import { timedTransaction, type ApplyTimeline } from './apply-timeline.ts';
import { newUuid } from './uuids.ts';

/** What the apply is doing when it reports progress: reading the batch through once, or planning (and writing) it. */
type ApplyPhase = 'read' | 'plan' | 'write';

export interface ApplyRequest {
  batchId: string;
  bodySha256: string;
  /** The authenticated principal: recorded on every revision, grants the write. */
  principal: string;
  force: boolean;
  offeredForceKey?: string;
  forceKeySecret: string;
  /** False for test batches: plan and judge, write nothing, consume nothing, lock nothing beyond reads. */
  commit: boolean;
  /**
   * Called after every group of commands, with the share of the batch's
   * commands planned so far (0 while reading it through the first time). It
   * may throw to abort: the error propagates and the caller rolls back.
   */
  onProgress?: (done: number, phase: ApplyPhase) => Promise<void>;
  /** Checked between groups: once aborted, the apply stops with the signal's reason. */
  signal?: AbortSignal;
  /** Commands planned and written at a time (default GROUP_SIZE). */
  groupSize?: number;
  /** Measuring aid (APPLY_TIMELINE): each database call's wall and CPU time, and the worker's between them. */
  timeline?: ApplyTimeline;
}

/**
 * A batch's commands, read anew for each of the two passes: in groups, in
 * document order, each group awaited before the next is read.
 */
export interface CommandSource {
  read(groupSize: number, onGroup: (commands: ChangeCommand[]) => Promise<void>): Promise<BatchReadSummary>;
  /**
   * The first pass alone, cheaper than `read` (a stored body: its bytes are
   * walked, not parsed into commands); undefined when it cannot be done this
   * way, and then `read` does it.
   */
  survey?(sink: SurveySink, onChunk: () => Promise<void>): Promise<SurveyScanSummary | undefined>;
}

interface AppliedBatch {
  outcome: BatchResult['outcome'];
  /**
   * The result document as objects; a success's revisions are read back
   * from the transaction's staged lines (a test batch answers them), so
   * only before the transaction ends.
   */
  result(): Promise<BatchResult>;
  /** Revision lines of a success (0 for a failure): how large the result is. */
  revisions: number;
  /** Commands (creates and updates) in the batch. */
  changes: number;
}

/** What ApplyTransaction.finishBatch stores: a failure as JSON text, a success built from its staged lines (db/apply/result-lines.ts). */
export type AppliedResult = AppliedBatch & ({ resultJson(): Iterable<string> } | { stagedSuccess: { transactionUuid: string } });

/**
 * Commands per group: large enough for bulk COPY speed (1,000 rows a COPY), small enough that a
 * group's commands, records and COPY rows (two groups are alive at once: one
 * being planned, one being written) stay a few tens of MB.
 */
const GROUP_SIZE = 1000;

/** The rule judged at the end of the batch, with the holders the database supplies. */
const { end } = BATCH_PIPELINE;
type StagedEntry = NonNullable<ReturnType<typeof end.entryOf>>;

/** A stored XML body, read from its start for each pass. */
export function xmlCommandSource(body: () => AsyncIterable<Uint8Array | string>): CommandSource {
  return {
    read: (groupSize, onGroup) => readBatchInGroups(body(), groupSize, onGroup),
    survey: (sink, onChunk) => scanBatchSurvey(body(), sink, onChunk),
  };
}

/** Commands already in memory (the bulk loader, tests). */
export function arrayCommandSource(commands: readonly ChangeCommand[], header: BatchHeader): CommandSource {
  return {
    async read(groupSize, onGroup) {
      for (let start = 0; start < commands.length; start += groupSize) await onGroup(commands.slice(start, start + groupSize));
      const creates = commands.filter((command) => command.kind === 'create').length;
      return { header, changes: commands.length, creates, updates: commands.length - creates };
    },
  };
}

/**
 * Plans and (when allowed and asked) writes a batch in ONE PostgreSQL
 * transaction, `transaction`, already begun; the caller commits or rolls
 * back. Memory follows a group of commands, not the batch:
 *
 * 1. The batch is read through once (BatchSurvey): its localIds, what the
 *    commands reference, and how many commands each entity gets.
 * 2. Updated records are locked (in id order, so concurrent batches cannot
 *    deadlock), then the client-given entity UUIDs the batch creates are
 *    claimed (the second of two batches creating one waits, then finds it
 *    taken); entity ids are allocated, referenced entities' states loaded.
 * 3. The batch is read again a group at a time; each group is planned, the
 *    records no later command can change are drained from the planner,
 *    encoded, and sent by COPY while the next group is read and planned.
 *
 * 4. Once every group is written, the end-of-batch rule (BATCH_PIPELINE.end:
 *    preferred names) has its staged keys claimed and their holders read: a
 *    concurrent batch writing the same name has committed by then, and is
 *    seen, as one-at-a-time would see it.
 *
 * Locks and claims are taken in that order (records, UUIDs, names, and at
 * COMMIT the commit order's lock), each kind sorted, so overlapping batches
 * wait for each other and never deadlock; batches that share none of these
 * wait only for each other's commit record (docs/decisions/0015-one-global-lock-order-and-write-claims.md).
 *
 * Records are written before the batch is judged whole, under a savepoint:
 * an error anywhere (or a warning without force) rolls the savepoint back,
 * and the outcome lists every issue of the batch, as a whole-batch plan would.
 */
export async function applyBatch(untimed: ApplyTransaction, source: CommandSource, request: ApplyRequest): Promise<AppliedResult> {
  const transaction = timedTransaction(untimed, request.timeline);
  const planned = await planAndWrite(transaction, source, request);
  // What planning kept per entity (survey, final states) is garbage by now; the success's lines are in PostgreSQL.
  const refused = judge(planned.issues, request);
  if (planned.wrote) await transaction.endWrites(refused === undefined);
  const { changes, lines, transactionUuid } = planned;
  if (refused !== undefined)
    return { outcome: 'failure', result: async () => refused, resultJson: () => [JSON.stringify(refused)], revisions: 0, changes };
  return {
    outcome: 'success',
    result: async () => ({ outcome: 'success', transactionUuid, revisions: await transaction.readResultLines() }),
    stagedSuccess: { transactionUuid },
    revisions: lines,
    changes,
  };
}

interface PlannedBatch {
  issues: EntityIssues[];
  /** Revision lines staged (a success lists them all). */
  lines: number;
  transactionUuid: string;
  /** Whether records were written (under the savepoint the caller ends). */
  wrote: boolean;
  changes: number;
}

/** Steps 1 to 4 of applyBatch: every group planned (and written while the batch has no error), and the batch's issues. */
async function planAndWrite(transaction: ApplyTransaction, source: CommandSource, request: ApplyRequest): Promise<PlannedBatch> {
  const groupSize = request.groupSize ?? GROUP_SIZE;
  const progress = async (done: number, phase: ApplyPhase) => {
    request.signal?.throwIfAborted();
    await request.onProgress?.(done, phase);
  };

  const { survey, header, secondPass } = await surveyBatch(source, groupSize, () => progress(0, 'read'));
  const total = survey.commands;

  const { world, planner } = await preparePlanner(transaction, survey, header, request);
  // The end-of-batch rule's entries and the result's lines go to PostgreSQL a group at a time (db/apply/names.ts,
  // result-lines.ts): nothing of them stays here per entity.
  await transaction.createStages();
  let staged = 0;
  let lines = 0;
  const writer = request.commit ? transaction.planWriter({ batchId: request.batchId, principal: request.principal }) : undefined;
  if (writer !== undefined) {
    await transaction.beginWrites();
    await writer.start();
  }
  // Nothing more is written once the batch has an error: the rest is only planned, for its issues.
  let writing = writer !== undefined;
  let planned = 0;
  let inFlight: Promise<void> = Promise.resolve();

  /** A group's work for PostgreSQL: its rows (while writing), and its staged entries and result lines. */
  type Outgoing = { load: StepLoad | undefined; staging: CopyLoad[] };
  /** Takes drained records over: their end-of-batch entries, their revision for the result, their rows. */
  const settle = async (records: PlannedRecord[]): Promise<Outgoing> => {
    const entries: StagedEntry[] = [];
    for (const record of records) {
      const entry = end.entryOf(record);
      if (entry !== undefined) entries.push(entry);
    }
    const staging = [encodeStagedEntries(entries, staged), encodeResultLines(records, lines)];
    staged += entries.length;
    lines += records.length;
    if (writing && planner.hasErrors) writing = false;
    return { load: writing && writer !== undefined && records.length > 0 ? await writer.encode(records) : undefined, staging };
  };
  /** Sends a group once the previous one is in; returns at once, the next group is planned meanwhile. */
  const send = async ({ load, staging }: Outgoing, phase: ApplyPhase): Promise<void> => {
    await inFlight;
    const done = total === 0 ? 1 : planned / total;
    inFlight = (async () => {
      if (load !== undefined) await writer!.send(load, staging);
      else await transaction.stage(staging);
      await progress(done, phase);
    })();
    // Awaited before the next group is sent; until then a failure must not count as unhandled.
    inFlight.catch(() => undefined);
  };

  try {
    await secondPass.read(groupSize, async (commands) => {
      request.signal?.throwIfAborted();
      world.setRecords(await transaction.loadRecords(storedUpdateRefs(commands)));
      planner.plan(commands);
      planned += commands.length;
      // Planned: the reader's array is emptied, so the commands go while this group waits for the previous one's COPY.
      commands.length = 0;
      const drained = planner.drain();
      world.setRecords([]);
      const step = await settle(drained);
      drained.length = 0;
      await send(step, writing ? 'write' : 'plan');
    });
    const outcome = planner.finish();
    const last = await settle(outcome.records);
    outcome.records.length = 0;
    await send(last, writing ? 'write' : 'plan');
    await inFlight;

    if (writing) await transaction.claimStagedKeys();
    const facts = await transaction.findKeyHolders(writer?.seq);
    const log = new IssueLog(outcome.issues);
    const judged = end.judge(
      facts.entries,
      (key) => facts.holders.get(key) ?? [],
      (entityId) => planner.isPlanned(entityId),
      newUuid,
    );
    for (const group of judged) log.add(group.localId, group.issues);
    return {
      issues: log.groups(),
      lines,
      transactionUuid: writer?.transactionUuid ?? randomUUID(),
      wrote: writer !== undefined,
      changes: total,
    };
  } catch (error) {
    // The connection must be idle (no COPY half sent) before the caller can roll back on it.
    await inFlight.catch(() => undefined);
    throw error;
  }
}

/**
 * Step 2 of applyBatch: locks, claims, lookups and entity ids, and the
 * planner given every declaration. A function of its own so that what it
 * reads for that (the lookups: a UUID string per create, the summaries, the
 * allocated ids) is garbage once it returns: a variable of planAndWrite's
 * suspended frame would stay alive until the whole apply ends.
 */
async function preparePlanner(
  transaction: ApplyTransaction,
  survey: BatchSurvey,
  header: BatchHeader,
  request: ApplyRequest,
): Promise<{ world: ReturnType<typeof createGroupedWorld>; planner: BatchPlanner }> {
  const lookups = survey.lookups();
  survey.releaseLookups();
  const locked = await transaction.lockEntities(lookups.records);
  if (request.commit) await transaction.claimEntityUuids(lookups.createUuids);
  const targets = await transaction.loadSummaries(lookups.targets);
  const takenUuids = await transaction.takenEntityUuids(lookups.createUuids);
  const entityIds = await transaction.allocateEntityIds(lookups.createCount, request.commit);
  const world = createGroupedWorld({ entities: [...locked, ...targets], takenUuids });
  let nextId = 0;
  const planner = new BatchPlanner(world, {
    newUuid,
    // Called by declare() alone, for every create up front: the ids are not needed after it.
    allocateEntityId: () => {
      const id = entityIds[nextId++];
      if (id === undefined) throw new Error('more creates than allocated entity ids');
      return id;
    },
    now: new Date().toISOString(),
    user: header.sender,
  });
  planner.declare(survey);
  entityIds.length = 0;
  return { world, planner };
}

/**
 * Step 1 of applyBatch, the first pass: by the source's own survey when it
 * has one, else by reading the commands (a batch of one group is then not
 * read twice: its commands are kept for the second pass).
 */
async function surveyBatch(
  source: CommandSource,
  groupSize: number,
  progress: () => Promise<void>,
): Promise<{ survey: BatchSurvey; header: BatchHeader; secondPass: CommandSource }> {
  if (source.survey !== undefined) {
    const survey = new BatchSurvey();
    const scanned = await source.survey(survey, progress);
    if (scanned !== undefined) return { survey, header: scanned.header, secondPass: source };
  }
  const survey = new BatchSurvey();
  let groups = 0;
  let onlyGroup: ChangeCommand[] | undefined;
  const { header } = await source.read(groupSize, async (commands) => {
    groups += 1;
    onlyGroup = groups === 1 ? commands : undefined;
    for (const command of commands) survey.add(command);
    await progress();
  });
  return { survey, header, secondPass: groups <= 1 ? arrayCommandSource(onlyGroup ?? [], header) : source };
}

/** The batch's failure (on any error, and on warnings unless forced or the force key matches), or undefined when it succeeds. */
function judge(issues: EntityIssues[], request: ApplyRequest): BatchFailure | undefined {
  if (hasSeverity(issues, 'ERROR')) return failure(issues);
  if (hasSeverity(issues, 'WARNING') && !request.force) {
    const offered = request.offeredForceKey;
    if (offered === undefined || !forceKeyMatches(request.forceKeySecret, request.bodySha256, issues, offered)) {
      const listed = offered === undefined ? issues : [...issues, staleForceKeyIssue()];
      return failure(listed, computeForceKey(request.forceKeySecret, request.bodySha256, issues));
    }
  }
  return undefined;
}

/** Commands already in memory, applied in one transaction (the bulk loader and test batches). */
export async function applyBatchCommands(
  transaction: ApplyTransaction,
  commands: readonly ChangeCommand[],
  request: ApplyRequest & { sender: BatchHeader['sender'] },
): Promise<BatchResult> {
  return (await applyBatch(transaction, arrayCommandSource(commands, { version: 'v2', sender: request.sender }), request)).result();
}

function failure(issues: EntityIssues[], forceKey?: string): BatchFailure {
  const checked: BatchFailure = { outcome: 'failure', entities: issues, checkedAt: new Date().toISOString() };
  return forceKey === undefined ? checked : { ...checked, forceKey };
}

function staleForceKeyIssue(): EntityIssues {
  return {
    issues: [
      {
        uuid: randomUUID(),
        severity: 'ERROR',
        issueCode: BATCH_ISSUE_CODES.invalidForceKey,
        message: 'the forceKey does not match this batch and its current warnings; use the forceKey of this response',
      },
    ],
  };
}

/** The entities a group of commands updates by reference: their records as the batch found them (locked, and written only after their last command). */
function storedUpdateRefs(commands: readonly ChangeCommand[]): EntityRef[] {
  return commands.flatMap((command) => (command.kind === 'update' && command.entity.kind === 'stored' ? [refOf(command.entity)] : []));
}
