import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { copyRows } from '../../db/copy.ts';
import { toStoredChanges } from '../../db/revision-changes.ts';
import { batchSuccess, type BatchPlan, type PlannedRecord } from '../../domain/batch/index.ts';
import type { BatchSuccess, EntityRecord } from '../../domain/model.ts';
import { searchValues } from '../../domain/search-values.ts';
import { briefDescription, normalizeForSearch, preferredName } from '../../domain/text.ts';

export interface WriteContext {
  batchId: string;
  principal: string;
  onProgress?: (done: number) => Promise<void>;
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

const SEARCH_COLUMNS = [
  'entity_id',
  'part_uuid',
  'part_type',
  'preferred',
  'kind',
  'item_type',
  'item_spec',
  'value',
  'value_norm',
];

const PARTICIPANT_COLUMNS = [
  'entity_id',
  'user_id',
  'role',
  'last_change',
];

/** Records written between progress reports: small enough for a lively progress bar, large enough for bulk speed. */
const RECORDS_PER_STEP = 2000;

/**
 * Writes a plan that passed every check: one transaction row, the new current
 * form of each touched entity, one revision per entity, and the search rows.
 * Runs inside the caller's transaction.
 */
export async function writePlan(client: pg.PoolClient, plan: BatchPlan, context: WriteContext): Promise<BatchSuccess> {
  const transactionUuid = randomUUID();
  const { rows } = await client.query<{ seq: string }>(
    'insert into transaction (uuid, batch_id) values ($1, $2) returning seq',
    [transactionUuid, context.batchId],
  );
  const seq = rows[0]!.seq;

  for (let start = 0; start < plan.records.length; start += RECORDS_PER_STEP) {
    const step = plan.records.slice(start, start + RECORDS_PER_STEP);
    await keepSupersededSnapshots(client, step);
    await writeEntities(client, step, seq);
    await copyRows(client, 'revision', REVISION_COLUMNS, step.map((record) => revisionRow(record, seq, context)));
    await replaceSearchRows(client, step);
    await context.onProgress?.((start + step.length) / plan.records.length);
  }

  return batchSuccess(plan, transactionUuid);
}

function entityRow(record: EntityRecord, seq: string): unknown[] {
  const name = preferredName(record);
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
    JSON.stringify(record),
  ];
}

async function writeEntities(client: pg.PoolClient, records: readonly PlannedRecord[], seq: string): Promise<void> {
  const created = records.filter((record) => record.isNew).map((record) => entityRow(record.after, seq));
  const updated = records.filter((record) => !record.isNew).map((record) => entityRow(record.after, seq));
  await copyRows(client, 'entity', ENTITY_COLUMNS, created);
  if (updated.length === 0) return;
  const arrays = ENTITY_COLUMNS.map((column, index) => `$${index + 1}::${ENTITY_COLUMN_TYPES[column]}[]`).join(', ');
  const assignments = ENTITY_COLUMNS.filter((name) => name !== 'id' && name !== 'uuid').map((name) => `${name} = u.${name}`).join(', ');
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
};

/**
 * The current revision of a record stores no snapshot (the record itself is
 * that snapshot); before a record changes, its outgoing revision keeps a copy.
 * A bulk create thus writes each record once, not twice.
 */
async function keepSupersededSnapshots(client: pg.PoolClient, records: readonly PlannedRecord[]): Promise<void> {
  const existing = records.filter((record) => !record.isNew).map((record) => record.after.entityId);
  if (existing.length === 0) return;
  await client.query(
    `update revision r set snapshot = e.record
       from entity e
      where e.id = any($1::bigint[]) and r.entity_id = e.id and r.uuid = e.metadata_rev and r.snapshot is null`,
    [existing],
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

async function replaceSearchRows(client: pg.PoolClient, records: readonly PlannedRecord[]): Promise<void> {
  const existing = records.filter((record) => !record.isNew).map((record) => record.after.entityId);
  if (existing.length > 0) {
    await client.query('delete from search_value where entity_id = any($1::bigint[])', [existing]);
    await client.query('delete from entity_participant where entity_id = any($1::bigint[])', [existing]);
  }
  const searchRows: unknown[][] = [];
  const participantRows: unknown[][] = [];
  for (const { after } of records) {
    for (const value of searchValues(after)) {
      searchRows.push([after.entityId, value.partUuid, value.partType, value.preferred, value.kind, value.itemType, value.itemSpec, value.value, value.valueNorm]);
    }
    const seen = new Set<string>();
    for (const participant of after.revision.participants) {
      const key = `${participant.user.id}\u0000${participant.role}`;
      if (seen.has(key)) continue;
      seen.add(key);
      participantRows.push([after.entityId, participant.user.id, participant.role, participant.lastChange]);
    }
  }
  await copyRows(client, 'search_value', SEARCH_COLUMNS, searchRows);
  await copyRows(client, 'entity_participant', PARTICIPANT_COLUMNS, participantRows);
}
