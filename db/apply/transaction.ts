import type pg from 'pg';
import type { EntitySummary } from '../../domain/batch/index.ts';
import type { EntityRecord, EntityRef } from '../../domain/model.ts';
import { finishBatchWithResult, type ResultJson } from '../batches.ts';
import { notifyCommit } from '../notify.ts';
import { splitRefs } from '../entity-refs.ts';
import { CLAIM_KINDS, claimKeys, claimStagedKeys } from '../write-claims.ts';
import { sendCopyLoads, type CopyLoad } from '../copy.ts';
import { CREATE_NAME_STAGE, dropNameStage, findKeyHolders, STAGED_NAMES, type KeyHolders } from './names.ts';
import { CREATE_LINE_STAGE, readResultLines } from './result-lines.ts';
import type { BatchRevisionResult } from '../../domain/model.ts';
import { PlanWriter, type WriteContext } from './write-plan.ts';

/**
 * What applying a batch reads, locks, claims and writes, on one PostgreSQL
 * transaction the caller has begun (and commits or rolls back). The use case
 * holds this handle and never the connection: every statement of the apply
 * is here or in PlanWriter.
 */
export class ApplyTransaction {
  readonly #client: pg.PoolClient;
  readonly #pool: pg.Pool;

  /** `pool` lends another connection for what must not wait for this transaction (the name vocabulary). */
  constructor(client: pg.PoolClient, pool: pg.Pool) {
    this.#client = client;
    this.#pool = pool;
  }

  /** The process id of this transaction's PostgreSQL backend (a measuring aid: services/batches/apply-timeline.ts). */
  async backendPid(): Promise<number> {
    const { rows } = await this.#client.query<{ pid: number }>('select pg_backend_pid() as pid');
    return rows[0]!.pid;
  }

  /** Locks the entities updates name, in id order (so concurrent batches cannot deadlock); their summaries tell the planner who they are. */
  async lockEntities(refs: readonly EntityRef[]): Promise<EntitySummary[]> {
    if (refs.length === 0) return [];
    const { ids, uuids } = splitRefs(refs);
    const { rows } = await this.#client.query<SummaryRow>(
      `select id, uuid, state from entity where id = any($1::bigint[]) or uuid = any($2::uuid[]) order by id for update`,
      [ids, uuids],
    );
    return rows.map(summaryOf);
  }

  /** Who the stored entities that items and replacements point at are (not locked). */
  async loadSummaries(refs: readonly EntityRef[]): Promise<EntitySummary[]> {
    if (refs.length === 0) return [];
    const { ids, uuids } = splitRefs(refs);
    const { rows } = await this.#client.query<SummaryRow>(
      `select id, uuid, state from entity where id = any($1::bigint[]) or uuid = any($2::uuid[])`,
      [ids, uuids],
    );
    return rows.map(summaryOf);
  }

  /** The current records of these entities, as this transaction sees them. */
  async loadRecords(refs: readonly EntityRef[]): Promise<EntityRecord[]> {
    if (refs.length === 0) return [];
    const { ids, uuids } = splitRefs(refs);
    const { rows } = await this.#client.query<{ record: EntityRecord }>(
      `select record from entity where id = any($1::bigint[]) or uuid = any($2::uuid[])`,
      [ids, uuids],
    );
    return rows.map((row) => row.record);
  }

  /** Which of these entity UUIDs (any case) a stored entity holds, as given. */
  async takenEntityUuids(uuids: readonly string[]): Promise<string[]> {
    if (uuids.length === 0) return [];
    // The uuid type reads any case: the batch's UUIDs go as given, and only the taken ones (usually none) are matched back.
    // One JSON text, not pg's array parameter (a string per UUID).
    const { rows } = await this.#client.query<{ uuid: string }>(
      `select uuid from entity where uuid = any(array(select json_array_elements_text($1::json))::uuid[])`,
      [JSON.stringify(uuids)],
    );
    if (rows.length === 0) return [];
    const taken = new Set(rows.map((row) => row.uuid));
    return uuids.filter((uuid) => taken.has(uuid.toLowerCase()));
  }

  /**
   * `count` entity ids from the sequence, in the order it gave them;
   * predicted without consuming any when `consume` is false (a test batch).
   * They come back as runs of consecutive ids (one, unless a concurrent
   * batch drew from the sequence meanwhile), not a row per id: a large
   * batch's hundreds of thousands of rows were tens of MB for a moment.
   */
  async allocateEntityIds(count: number, consume: boolean): Promise<number[]> {
    if (count === 0) return [];
    const ids = consume
      ? `select nextval('entity_id_seq') as id, n from generate_series(1, $1) n`
      : `select (select case when is_called then last_value else last_value - 1 end from entity_id_seq) + n as id, n from generate_series(1, $1) n`;
    const { rows } = await this.#client.query<{ first: string; ids: number }>(
      `select min(id) as first, count(*)::int as ids
         from (select id, n, sum(case when id = previous + 1 then 0 else 1 end) over (order by n) as run
                 from (select id, n, lag(id) over (order by n) as previous from (${ids}) drawn) steps) runs
        group by run
        order by min(n)`,
      [count],
    );
    const allocated: number[] = [];
    for (const row of rows) for (let id = Number(row.first), last = id + row.ids; id < last; id += 1) allocated.push(id);
    return allocated;
  }

  /** Claims the client-given UUIDs the batch creates until the transaction ends (db/write-claims.ts). */
  async claimEntityUuids(uuids: readonly string[]): Promise<void> {
    await claimKeys(
      this.#client,
      CLAIM_KINDS.entityUuid,
      uuids.map((uuid) => uuid.toLowerCase()),
    );
  }

  /**
   * Creates the transaction's tables of staged name entries and result lines
   * (db/apply/names.ts, result-lines.ts), empty; before the first group.
   */
  async createStages(): Promise<void> {
    await this.#client.query(`${CREATE_NAME_STAGE}; ${CREATE_LINE_STAGE}`);
  }

  /** Stages a group's name entries and result lines when the group writes nothing: else PlanWriter.send takes them with its COPYs. */
  async stage(loads: readonly CopyLoad[]): Promise<void> {
    await sendCopyLoads(this.#client, loads);
  }

  /** The staged result lines (a success's revisions), in the order staged. */
  readResultLines(): Promise<BatchRevisionResult[]> {
    return readResultLines(this.#client);
  }

  /**
   * Claims the keys the batch writes (the checked keys of the staged
   * entries: preferred names) until the transaction ends; taken after the
   * UUIDs. A key is the entity type and the normalised name joined by U+0001
   * (NAME_KEY_SEPARATOR), as the claim is keyed.
   */
  async claimStagedKeys(): Promise<void> {
    await claimStagedKeys(this.#client, CLAIM_KINDS.preferredName, `select key from ${STAGED_NAMES} where checked`);
  }

  /** The staged entries the end-of-batch rule may judge and the stored holders of their keys (db/apply/names.ts); drops the stage. */
  async findKeyHolders(writtenAs?: string): Promise<KeyHolders> {
    const conflicts = await findKeyHolders(this.#client, writtenAs);
    await dropNameStage(this.#client);
    return conflicts;
  }

  /** Opens the savepoint the batch's writes sit under until it is judged. */
  async beginWrites(): Promise<void> {
    await this.#client.query('savepoint batch_apply');
  }

  /** Keeps the writes (success) or takes them all back (failure), ending the savepoint either way. */
  async endWrites(keep: boolean): Promise<void> {
    await this.#client.query(keep ? 'release savepoint batch_apply' : 'rollback to savepoint batch_apply');
  }

  /** The writer of the batch's records, group by group. */
  planWriter(context: WriteContext): PlanWriter {
    return new PlanWriter(this.#client, this.#pool, context);
  }

  /**
   * Ends the batch's row in this transaction, so that its outcome commits
   * with its revisions or not at all; false when the row was ended meanwhile
   * (its workflow was stopped).
   */
  async finishBatch(batchId: string, status: 'COMPLETED' | 'FAILED', result: ResultJson): Promise<boolean> {
    const finished = await finishBatchWithResult(this.#client, batchId, status, result);
    // Delivered at COMMIT to the push streams of every API process; dropped with a rollback.
    if (finished && status === 'COMPLETED') await notifyCommit(this.#client, batchId);
    return finished;
  }
}

type SummaryRow = { id: string; uuid: string; state: EntitySummary['state'] };

function summaryOf(row: SummaryRow): EntitySummary {
  return { entityId: Number(row.id), entityUuid: row.uuid, state: row.state };
}

/** The apply's handle on a transaction already begun on `client` (bench loaders and tests that hold their own pool). */
export function applyTransaction(client: pg.PoolClient, pool: pg.Pool): ApplyTransaction {
  return new ApplyTransaction(client, pool);
}
