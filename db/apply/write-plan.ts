import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { setImmediate } from 'node:timers/promises';
import { storedDocument, storedEacCpf } from '../document-bytes.ts';
import { encodeCopyLoad, sendCopyLoad, sendCopyLoads, type CopyLoad } from '../copy.ts';
import { addNameWords } from '../name-vocabulary.ts';
import { toStoredChanges } from '../revision-changes.ts';
import type { PlannedRecord } from '../../domain/batch/index.ts';
import type { EntityRecord } from '../../domain/model.ts';
import { searchUserRoles, searchValues } from '../../domain/search-values.ts';
import { briefDescription, normalizeForSearch, preferredName } from '../../domain/text.ts';

export interface WriteContext {
  batchId: string;
  principal: string;
}

const ENTITY_COLUMNS = [
  'id',
  'uuid',
  'entity_type',
  'state',
  'rev',
  'metadata_rev',
  'last_seq',
  'preferred_name',
  'preferred_name_norm',
  'description',
  'record',
  'document_bytes',
  'eac_cpf',
];

const REVISION_COLUMNS = [
  'uuid',
  'entity_id',
  'seq',
  'batch_id',
  'rev',
  'metadata_rev',
  'prev_rev',
  'content_changed',
  'created_at',
  'user_name',
  'principal',
  'changes',
];

const SEARCH_COLUMNS = ['entity_id', 'part_uuid', 'part_type', 'preferred', 'kind', 'item_type', 'item_spec', 'value', 'value_norm'];

const PARTICIPANT_COLUMNS = ['entity_id', 'user_id', 'role', 'last_change'];

const USER_ROLE_COLUMNS = ['user_key', 'role', 'entity_id'];

/** Records encoded between two turns of the event loop, so the previous group's COPY keeps flowing meanwhile. */
const RECORDS_PER_SLICE = 250;

/** One group's rows, encoded for COPY, and the records whose rows they replace. */
export interface StepLoad {
  /** Entities the step changes (not creates): their snapshot, current form and search rows are replaced. */
  existingIds: number[];
  created: CopyLoad;
  updatedRows: unknown[][];
  revisions: CopyLoad;
  searchValues: CopyLoad;
  participants: CopyLoad;
  /** The users of each record's current revision, as user filters find them (search_user_role). */
  userRoles: CopyLoad;
  /** The normalised names among the search rows: their words join the shared vocabulary outside the transaction. */
  namesNorm: string[];
}

/**
 * Writes the records of a plan that passed every check, group by group as
 * the planner drains them: one transaction row, the new current form of each
 * touched entity, one revision per entity, and the search rows. Runs inside
 * the caller's transaction. A group's rows are encoded (encode) while
 * PostgreSQL still takes the previous group's (send, not awaited by the
 * caller until the next group is encoded), so the worker's CPU and the
 * database's work overlap instead of taking turns.
 */
export class PlanWriter {
  readonly #client: pg.PoolClient;
  readonly #pool: pg.Pool;
  readonly #context: WriteContext;
  readonly transactionUuid = randomUUID();
  #seq: string | undefined;

  /** `pool` lends another connection for what must not wait for this transaction (the name vocabulary). */
  constructor(client: pg.PoolClient, pool: pg.Pool, context: WriteContext) {
    this.#client = client;
    this.#pool = pool;
    this.#context = context;
  }

  /** The seq of the batch's transaction row (last_seq of every record it writes), once started. */
  get seq(): string | undefined {
    return this.#seq;
  }

  /** Inserts the batch's transaction row (once, before the first group). */
  async start(): Promise<void> {
    if (this.#seq !== undefined) return;
    const { rows } = await this.#client.query<{ seq: string }>('insert into transaction (uuid, batch_id) values ($1, $2) returning seq', [
      this.transactionUuid,
      this.#context.batchId,
    ]);
    this.#seq = rows[0]!.seq;
  }

  /** The COPY rows of a group of records: CPU only, yielding to the event loop now and then. */
  encode(records: readonly PlannedRecord[]): Promise<StepLoad> {
    if (this.#seq === undefined) throw new Error('PlanWriter.start must run before encode');
    return encodeStep(records, this.#seq, this.#context);
  }

  /** Sends an encoded group on the transaction's connection; `extra` loads (the staged name entries) go with its last COPYs. */
  async send(load: StepLoad, extra: readonly CopyLoad[] = []): Promise<void> {
    await Promise.all([writeStep(this.#client, load, extra), addNameWords(this.#pool, load.namesNorm)]);
  }
}

async function encodeStep(step: readonly PlannedRecord[], seq: string, context: WriteContext): Promise<StepLoad> {
  const createdRows: unknown[][] = [];
  const updatedRows: unknown[][] = [];
  const revisionRows: unknown[][] = [];
  const searchRows: unknown[][] = [];
  const participantRows: unknown[][] = [];
  const userRoleRows: unknown[][] = [];
  const namesNorm: string[] = [];
  for (let start = 0; start < step.length; start += RECORDS_PER_SLICE) {
    if (start > 0) await setImmediate();
    for (const record of step.slice(start, start + RECORDS_PER_SLICE)) {
      (record.isNew ? createdRows : updatedRows).push(entityRow(record.after, seq));
      revisionRows.push(revisionRow(record, seq, context));
      for (const value of searchValues(record.after)) {
        searchRows.push([
          record.after.entityId,
          value.partUuid,
          value.partType,
          value.preferred,
          value.kind,
          value.itemType,
          value.itemSpec,
          value.value,
          value.valueNorm,
        ]);
        if (value.kind === 'name') namesNorm.push(value.valueNorm);
      }
      participantRows.push(...participantRowsOf(record.after));
      for (const pair of searchUserRoles(record.after)) userRoleRows.push([pair.userKey, pair.role, record.after.entityId]);
    }
  }
  return {
    existingIds: step.filter((record) => !record.isNew).map((record) => record.after.entityId),
    created: encodeCopyLoad('entity', ENTITY_COLUMNS, createdRows),
    updatedRows,
    revisions: encodeCopyLoad('revision', REVISION_COLUMNS, revisionRows),
    searchValues: encodeCopyLoad('search_value', SEARCH_COLUMNS, searchRows),
    participants: encodeCopyLoad('entity_participant', PARTICIPANT_COLUMNS, participantRows),
    userRoles: encodeCopyLoad('search_user_role', USER_ROLE_COLUMNS, userRoleRows),
    namesNorm,
  };
}

async function writeStep(client: pg.PoolClient, load: StepLoad, extra: readonly CopyLoad[]): Promise<void> {
  // A group of creates alone: its COPYs as one round trip (sendCopyLoads), PostgreSQL never waiting for the worker between tables.
  if (load.existingIds.length === 0)
    return sendCopyLoads(client, [load.created, load.revisions, load.searchValues, load.participants, load.userRoles, ...extra]);
  await keepSupersededSnapshots(client, load.existingIds);
  await sendCopyLoad(client, load.created);
  await updateEntities(client, load.updatedRows);
  await sendCopyLoad(client, load.revisions);
  if (load.existingIds.length > 0) {
    await client.query('delete from search_value where entity_id = any($1::bigint[])', [load.existingIds]);
    await client.query('delete from entity_participant where entity_id = any($1::bigint[])', [load.existingIds]);
    await client.query('delete from search_user_role where entity_id = any($1::bigint[])', [load.existingIds]);
  }
  await sendCopyLoads(client, [load.searchValues, load.participants, load.userRoles, ...extra]);
}

function entityRow(record: EntityRecord, seq: string): unknown[] {
  const name = preferredName(record);
  const json = JSON.stringify(record);
  return [
    record.entityId,
    record.entityUuid,
    record.entityType,
    record.state,
    record.revision.rev,
    record.revision.metadataRev,
    seq,
    name || null,
    name ? normalizeForSearch(name) : null,
    briefDescription(record) ?? null,
    json,
    storedDocument(record),
    storedEacCpf(record, json),
  ];
}

async function updateEntities(client: pg.PoolClient, updated: readonly unknown[][]): Promise<void> {
  if (updated.length === 0) return;
  const arrays = ENTITY_COLUMNS.map((column, index) => `$${index + 1}::${ENTITY_COLUMN_TYPES[column]}[]`).join(', ');
  const assignments = ENTITY_COLUMNS.filter((name) => name !== 'id' && name !== 'uuid')
    .map((name) => `${name} = u.${name}`)
    .join(', ');
  await client.query(
    `update entity e set ${assignments} from unnest(${arrays}) as u(${ENTITY_COLUMNS.join(', ')}) where e.id = u.id`,
    ENTITY_COLUMNS.map((_, index) => updated.map((row) => row[index])),
  );
}

const ENTITY_COLUMN_TYPES: Record<string, string> = {
  id: 'bigint',
  uuid: 'uuid',
  entity_type: 'text',
  state: 'text',
  rev: 'uuid',
  metadata_rev: 'uuid',
  last_seq: 'bigint',
  preferred_name: 'text',
  preferred_name_norm: 'text',
  description: 'text',
  record: 'jsonb',
  document_bytes: 'text',
  eac_cpf: 'text',
};

/**
 * The current revision of a record stores no snapshot (the record itself is
 * that snapshot); before a record changes, its outgoing revision keeps a copy.
 * A bulk create thus writes each record once, not twice.
 */
async function keepSupersededSnapshots(client: pg.PoolClient, existingIds: readonly number[]): Promise<void> {
  if (existingIds.length === 0) return;
  await client.query(
    `update revision r set snapshot = e.record
       from entity e
      where e.id = any($1::bigint[]) and r.entity_id = e.id and r.uuid = e.metadata_rev and r.snapshot is null`,
    [existingIds],
  );
}

function revisionRow(record: PlannedRecord, seq: string, context: WriteContext): unknown[] {
  const revision = record.after.revision;
  return [
    revision.metadataRev,
    record.after.entityId,
    seq,
    context.batchId,
    revision.rev,
    revision.metadataRev,
    revision.prevRev ?? null,
    record.contentChanged,
    revision.createdAt,
    revision.user?.name ?? null,
    context.principal,
    JSON.stringify(toStoredChanges(record.changes)),
  ];
}

/** One row per user and role, however often the record names them. */
function participantRowsOf(record: EntityRecord): unknown[][] {
  const rows: unknown[][] = [];
  const seen = new Set<string>();
  for (const participant of record.revision.participants) {
    const key = `${participant.user.id}\u0000${participant.role}`;
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push([record.entityId, participant.user.id, participant.role, participant.lastChange]);
  }
  return rows;
}
