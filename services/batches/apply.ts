import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  addPreferredNameWarnings,
  batchLookups,
  batchSuccess,
  computeForceKey,
  createBatchWorld,
  forceKeyMatches,
  planBatch,
  preferredNameKeys,
  type BatchPlan,
  type EntitySummary,
} from '../../domain/batch/index.ts';
import {
  BATCH_ISSUE_CODES,
  type BatchFailure,
  type BatchResult,
  type ChangeCommand,
  type EntityIssues,
  type EntityRecord,
  type EntityRef,
  type UserInfo,
} from '../../domain/model.ts';
import { splitRefs } from '../../db/entity-refs.ts';
import { newUuid } from './uuids.ts';
import { writePlan } from './write-plan.ts';

export interface ApplyRequest {
  batchId: string;
  bodySha256: string;
  sender: UserInfo;
  /** The authenticated principal: recorded on every revision, grants the write. */
  principal: string;
  force: boolean;
  offeredForceKey?: string;
  forceKeySecret: string;
  /** False for test batches: plan and judge, write nothing, consume nothing. */
  commit: boolean;
  /** Called as rows are written, with the share of records done (0..1). */
  onProgress?: (done: number) => Promise<void>;
}

/**
 * Plans and (when allowed and asked) writes a batch in ONE PostgreSQL
 * transaction on `client`, which must already be inside `begin`. The
 * caller commits or rolls back. Updated records are locked (in id order, so
 * concurrent batches cannot deadlock) before their revs are compared: two
 * batches naming the same rev serialise, and the later one fails as stale.
 * It takes the commands over: the array is emptied once they are planned, so
 * a large batch does not hold its commands and their plan while it writes.
 */
export async function applyBatchCommands(client: pg.PoolClient, commands: ChangeCommand[], request: ApplyRequest): Promise<BatchResult> {
  const lookups = batchLookups(commands);
  const records = await lockRecords(client, lookups.records);
  const entities = await loadSummaries(client, lookups.targets);
  const takenUuids = await takenEntityUuids(client, lookups.createUuids);
  const entityIds = await allocateEntityIds(client, lookups.createCount, request.commit);

  let nextId = 0;
  const plan0 = planBatch(commands, createBatchWorld({ records, entities, takenUuids }), {
    newUuid,
    allocateEntityId: () => {
      const id = entityIds[nextId++];
      if (id === undefined) throw new Error('more creates than allocated entity ids');
      return id;
    },
    now: new Date().toISOString(),
    user: request.sender,
  });
  commands.length = 0;
  const plan = await withPreferredNameWarnings(client, plan0);

  if (plan.hasErrors) return failure(plan.issues);
  if (plan.hasWarnings && !request.force) {
    const warnings = plan.issues;
    const offered = request.offeredForceKey;
    if (offered === undefined || !forceKeyMatches(request.forceKeySecret, request.bodySha256, warnings, offered)) {
      const issues = offered === undefined ? warnings : [...warnings, staleForceKeyIssue()];
      return failure(issues, computeForceKey(request.forceKeySecret, request.bodySha256, warnings));
    }
  }
  if (!request.commit) return batchSuccess(plan, randomUUID());
  return writePlan(client, plan, { batchId: request.batchId, principal: request.principal, onProgress: request.onProgress });
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

async function lockRecords(client: pg.PoolClient, refs: readonly EntityRef[]): Promise<EntityRecord[]> {
  if (refs.length === 0) return [];
  const { ids, uuids } = splitRefs(refs);
  const { rows } = await client.query<{ record: EntityRecord }>(
    `select record from entity where id = any($1::bigint[]) or uuid = any($2::uuid[]) order by id for update`,
    [ids, uuids],
  );
  return rows.map((row) => row.record);
}

async function loadSummaries(client: pg.PoolClient, refs: readonly EntityRef[]): Promise<EntitySummary[]> {
  if (refs.length === 0) return [];
  const { ids, uuids } = splitRefs(refs);
  const { rows } = await client.query<{ id: string; uuid: string; state: EntitySummary['state'] }>(
    `select id, uuid, state from entity where id = any($1::bigint[]) or uuid = any($2::uuid[])`,
    [ids, uuids],
  );
  return rows.map((row) => ({ entityId: Number(row.id), entityUuid: row.uuid, state: row.state }));
}

async function takenEntityUuids(client: pg.PoolClient, uuids: readonly string[]): Promise<string[]> {
  if (uuids.length === 0) return [];
  const { rows } = await client.query<{ uuid: string }>(`select uuid from entity where uuid = any($1::uuid[])`, [
    uuids.map((uuid) => uuid.toLowerCase()),
  ]);
  const taken = new Set(rows.map((row) => row.uuid));
  return uuids.filter((uuid) => taken.has(uuid.toLowerCase()));
}

/** Real ids come from the sequence; a test batch predicts them without consuming any. */
async function allocateEntityIds(client: pg.PoolClient, count: number, consume: boolean): Promise<number[]> {
  if (count === 0) return [];
  const sql = consume
    ? `select nextval('entity_id_seq') as id from generate_series(1, $1)`
    : `select (select case when is_called then last_value else last_value - 1 end from entity_id_seq) + n as id from generate_series(1, $1) n`;
  const { rows } = await client.query<{ id: string }>(sql, [count]);
  return rows.map((row) => Number(row.id));
}

async function withPreferredNameWarnings(client: pg.PoolClient, plan: BatchPlan): Promise<BatchPlan> {
  const keys = preferredNameKeys(plan);
  if (keys.length === 0) return plan;
  const { rows } = await client.query<{ entity_type: string; name: string; id: string }>(
    `select e.entity_type, e.preferred_name_norm as name, e.id
       from entity e
       join unnest($1::text[], $2::text[]) as k(entity_type, name) on e.entity_type = k.entity_type and e.preferred_name_norm = k.name
      where e.state in ('ERS_NEW', 'ERS_APPROVED')`,
    [keys.map((key) => key.entityType), keys.map((key) => key.normalizedName)],
  );
  const holders = new Map<string, number[]>();
  for (const row of rows) {
    const key = `${row.entity_type}\u0000${row.name}`;
    holders.set(key, [...(holders.get(key) ?? []), Number(row.id)]);
  }
  return addPreferredNameWarnings(plan, (entityType, name) => holders.get(`${entityType}\u0000${name}`) ?? [], newUuid);
}
