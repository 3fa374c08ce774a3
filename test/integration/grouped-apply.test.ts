// The apply service planning and writing a batch a group of commands at a
// time (services/batches/apply.ts): groups of one or two commands must give
// the same outcome as one group for the whole batch, and a failing batch must
// leave nothing written, whatever group the failure is found in.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../db/sql.ts';
import type { BatchResult, ChangeCommand, EntityRecord, Item, Part } from '../../domain/model.ts';
import { applyBatch, applyBatchCommands, arrayCommandSource, type ApplyRequest } from '../../services/batches/apply.ts';
import { storeBatch } from '../../db/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

const SENDER = { id: 'grouped', name: 'Grouped Apply' };

function namePart(main: string): Part {
  return { partUuid: '', type: 'PT_NAME', items: [{ kind: 'string', type: 'NM_MAIN', value: main }] };
}

function note(value: string): Item {
  return { kind: 'string', type: 'NOTE', value };
}

function request(overrides: Partial<ApplyRequest> = {}): ApplyRequest {
  return {
    batchId: randomUUID(),
    bodySha256: randomUUID(),
    principal: 'test',
    force: false,
    forceKeySecret: 'grouped-apply-secret-000',
    commit: true,
    ...overrides,
  };
}

describe('apply in groups', () => {
  let harness: Harness;
  let pool: pg.Pool;

  beforeAll(async () => {
    harness = await startHarness({ worker: false });
    pool = harness.db.pool;
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** The batch row its transaction row points at. */
  async function store(client: pg.PoolClient, batch: ApplyRequest): Promise<void> {
    await storeBatch(client, {
      id: batch.batchId,
      sha256: batch.bodySha256,
      apiVersion: 'v2',
      submittedBy: batch.principal,
      force: batch.force,
      changesTotal: 0,
      body: Buffer.alloc(0),
    });
  }

  /** Applies in a transaction that is rolled back afterwards, returning the outcome and what the batch wrote. */
  async function applyAndLook(commands: ChangeCommand[], entityType: string, groupSize: number, overrides: Partial<ApplyRequest> = {}) {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const batch = request({ groupSize, ...overrides });
      await store(client, batch);
      const result = await (
        await applyBatch(harness.db.revisions.within(client), arrayCommandSource(commands, { version: 'v2', sender: SENDER }), batch)
      ).result();
      const { rows } = await client.query<{ record: EntityRecord }>('select record from entity where entity_type = $1 order by id', [
        entityType,
      ]);
      const transactions = await client.query('select 1 from transaction where batch_id = $1', [batch.batchId]);
      return { result, records: rows.map((row) => row.record), transactions: transactions.rowCount };
    } finally {
      await client.query('rollback');
      client.release();
    }
  }

  async function storedEntity(entityType: string, name: string): Promise<{ entityId: number; rev: string }> {
    const result = await inTransaction(pool, async (client) => {
      const batch = request();
      await store(client, batch);
      return applyBatchCommands(
        harness.db.revisions.within(client),
        [{ kind: 'create', localId: 'stored', entityType, parts: [namePart(name)] }],
        { ...batch, sender: SENDER },
      );
    });
    if (result.outcome !== 'success') throw new Error(JSON.stringify(result));
    const [revision] = result.revisions;
    return { entityId: revision!.entityId, rev: revision!.rev };
  }

  /** A record without what differs between two applies of one batch (uuids, allocated ids, times), references named by localId. */
  function normalized(records: EntityRecord[], result: BatchResult, stored: Map<number, string>): unknown[] {
    const names = new Map(stored);
    if (result.outcome === 'success') for (const revision of result.revisions) names.set(revision.entityId, revision.localId);
    const strip = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(strip);
      if (value === null || typeof value !== 'object') return value;
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) {
        if (['uuid', 'partUuid', 'entityUuid', 'rev', 'metadataRev', 'prevRev', 'createdAt', 'from', 'preferredNamePart'].includes(key))
          continue;
        out[key] = key === 'entityId' ? names.get(inner as number) : strip(inner);
      }
      return out;
    };
    return records.map(strip).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }

  function issuesOf(result: BatchResult): { localId?: string; code?: string; severity: string }[] {
    if (result.outcome !== 'failure') return [];
    return result.entities.flatMap((group) =>
      group.issues.map((issue) => ({
        ...(group.localId === undefined ? {} : { localId: group.localId }),
        code: issue.issueCode,
        severity: issue.severity,
      })),
    );
  }

  it('allocates entity ids as the sequence gives them, also while another transaction draws from it, and predicts them for a test batch', async () => {
    const [one, two] = [await pool.connect(), await pool.connect()];
    try {
      await one.query('begin');
      const predicted = await harness.db.revisions.within(one).allocateEntityIds(3000, false);
      // Another connection draws while this one allocates: its ids fall between runs of this batch's, or after them.
      const [mine, theirs] = await Promise.all([
        harness.db.revisions.within(one).allocateEntityIds(3000, true),
        two
          .query<{ id: string }>(`select nextval('entity_id_seq') as id from generate_series(1, 50)`)
          .then(({ rows }) => rows.map((row) => Number(row.id))),
      ]);
      expect(mine).toHaveLength(3000);
      expect(new Set([...mine, ...theirs]).size).toBe(3050);
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
      expect(mine.every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
      expect(predicted[0]).toBeLessThanOrEqual(mine[0]!);
      expect(predicted).toEqual(Array.from({ length: 3000 }, (_, index) => predicted[0]! + index));
    } finally {
      await one.query('rollback');
      one.release();
      two.release();
    }
  });

  it('gives the same records in groups of one command as in one group, across forward references and later updates', async () => {
    const entityType = `T-${randomUUID()}`;
    const stored = await storedEntity(entityType, 'Stored');
    const commands: ChangeCommand[] = [
      { kind: 'create', localId: 'a', entityType, parts: [namePart('Alpha')] },
      // Points at a create further on: its ids come from the survey.
      {
        kind: 'create',
        localId: 'b',
        entityType,
        parts: [
          namePart('Beta'),
          {
            partUuid: '',
            type: 'PT_REL',
            items: [{ kind: 'entityRef', type: 'REL_ENTITY', spec: 'RT_RELATED', target: { kind: 'local', localId: 'z' } }],
          },
        ],
      },
      {
        kind: 'update',
        entity: { kind: 'stored', localId: 's', entityId: stored.entityId, rev: stored.rev },
        changes: [{ op: 'newPart', part: { partUuid: '', type: 'PT_BODY', items: [note('first')] } }],
      },
      { kind: 'create', localId: 'c', entityType, parts: [namePart('Gamma')] },
      // Touches 'a' again, groups after its create: 'a' must not be written before this.
      {
        kind: 'update',
        entity: { kind: 'local', localId: 'a' },
        changes: [{ op: 'newPart', part: { partUuid: '', type: 'PT_BODY', items: [note('later')] } }],
      },
      { kind: 'create', localId: 'z', entityType, parts: [namePart('Zeta')] },
      // The stored entity again, under another localId.
      {
        kind: 'update',
        entity: { kind: 'stored', localId: 's2', entityId: stored.entityId, rev: stored.rev },
        changes: [{ op: 'setState', state: 'ERS_APPROVED' }],
      },
    ];
    const whole = await applyAndLook(commands, entityType, 1000);
    const single = await applyAndLook(commands, entityType, 1);
    expect(whole.result.outcome, JSON.stringify(whole.result)).toBe('success');
    expect(single.result.outcome, JSON.stringify(single.result)).toBe('success');
    const storedName = new Map([[stored.entityId, 's']]);
    expect(normalized(single.records, single.result, storedName)).toEqual(normalized(whole.records, whole.result, storedName));

    const a = single.records.find((record) =>
      record.parts.some((part) => part.items.some((item) => item.kind === 'string' && item.value === 'Alpha')),
    );
    expect(a?.parts.map((part) => part.type)).toEqual(['PT_NAME', 'PT_BODY']);
    const s = single.records.find((record) => record.entityId === stored.entityId);
    expect(s?.state).toBe('ERS_APPROVED');
    expect(s?.parts.map((part) => part.type)).toEqual(['PT_NAME', 'PT_BODY']);
    expect(single.result.outcome === 'success' && single.result.revisions.map((revision) => revision.localId).sort()).toEqual([
      'a',
      'b',
      'c',
      's',
      'z',
    ]);
  });

  it('lists the issues of every group when a late group fails, and writes nothing', async () => {
    const entityType = `T-${randomUUID()}`;
    const commands: ChangeCommand[] = [
      { kind: 'create', localId: 'x', entityType, parts: [namePart('Ex')] },
      { kind: 'create', localId: 'y', entityType, parts: [] },
      { kind: 'create', localId: 'w', entityType, parts: [namePart('Double-u')] },
      { kind: 'create', localId: 'v', entityType, parts: [namePart('Vee')] },
      { kind: 'update', entity: { kind: 'local', localId: 'nope' }, changes: [{ op: 'setState', state: 'ERS_APPROVED' }] },
    ];
    const whole = await applyAndLook(commands, entityType, 1000);
    const grouped = await applyAndLook(commands, entityType, 2);
    // The same issues; a record's own checks run when it is drained, so their order may differ.
    const sorted = (result: BatchResult) => issuesOf(result).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    expect(sorted(grouped.result)).toEqual(sorted(whole.result));
    expect(sorted(grouped.result).map((issue) => issue.code)).toEqual(['UnknownLocalReference', 'MissingNamePart']);
    expect(grouped.records).toEqual([]);
    expect(grouped.transactions).toBe(0);
  });

  it('rolls back on a warning found only at the end (a preferred name shared across groups) unless forced', async () => {
    const entityType = `T-${randomUUID()}`;
    const commands: ChangeCommand[] = [
      { kind: 'create', localId: 'p', entityType, parts: [namePart('Same Name')] },
      { kind: 'create', localId: 'o1', entityType, parts: [namePart('Other 1')] },
      { kind: 'create', localId: 'o2', entityType, parts: [namePart('Other 2')] },
      { kind: 'create', localId: 'q', entityType, parts: [namePart('Same Name')] },
    ];
    const refused = await applyAndLook(commands, entityType, 1);
    expect(refused.result.outcome).toBe('failure');
    expect(refused.result.outcome === 'failure' && refused.result.forceKey).toBeTruthy();
    expect(issuesOf(refused.result)).toEqual([
      { localId: 'p', code: 'PreferredNameExists', severity: 'WARNING' },
      { localId: 'q', code: 'PreferredNameExists', severity: 'WARNING' },
    ]);
    expect(refused.records).toEqual([]);
    expect(refused.transactions).toBe(0);

    const forced = await applyAndLook(commands, entityType, 1, { force: true });
    expect(forced.result.outcome).toBe('success');
    expect(forced.records).toHaveLength(4);
  });

  it('finds the stored holders of names in every slice of the name lookup (20 groups of keys at a time)', async () => {
    const entityType = `T-${randomUUID()}`;
    const held = await storedEntity(entityType, 'Held Name');
    // Group size 1: the lookup asks for 20 keys at a time; the held name is the 45th key, in the third slice.
    const commands: ChangeCommand[] = Array.from({ length: 50 }, (_, index) => ({
      kind: 'create' as const,
      localId: `e${index}`,
      entityType,
      parts: [namePart(index === 44 ? 'Held Name' : `Name ${index}`)],
    }));
    const refused = await applyAndLook(commands, entityType, 1);
    expect(issuesOf(refused.result)).toEqual([{ localId: 'e44', code: 'PreferredNameExists', severity: 'WARNING' }]);
    expect(refused.result.outcome === 'failure' && JSON.stringify(refused.result.entities)).toContain(`entity ${held.entityId}`);
  });

  it('stops when onProgress throws or the signal is aborted, leaving the connection fit for a rollback', async () => {
    const entityType = `T-${randomUUID()}`;
    const commands: ChangeCommand[] = Array.from({ length: 6 }, (_, index) => ({
      kind: 'create' as const,
      localId: `e${index}`,
      entityType,
      parts: [namePart(`Entity ${index}`)],
    }));
    let calls = 0;
    await expect(
      applyAndLook(commands, entityType, 2, {
        onProgress: async (_done, phase) => {
          if (phase === 'write' && ++calls === 2) throw new Error('cancelled by the test');
        },
      }),
    ).rejects.toThrow('cancelled by the test');

    const controller = new AbortController();
    await expect(
      applyAndLook(commands, entityType, 2, {
        onProgress: async (done) => {
          if (done > 0) controller.abort(new Error('aborted by the test'));
        },
        signal: controller.signal,
      }),
    ).rejects.toThrow('aborted by the test');

    const { rows } = await pool.query('select count(*)::int as n from entity where entity_type = $1', [entityType]);
    expect(rows[0].n).toBe(0);
  });

  it('stores the records it writes compressed with lz4 where the server has it, as the column says', async () => {
    const entityType = `T-${randomUUID()}`;
    const long = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');
    const commands: ChangeCommand[] = [
      { kind: 'create', localId: 'long', entityType, parts: [{ ...namePart('Long'), items: [...namePart('Long').items, note(long)] }] },
    ];
    const client = await pool.connect();
    try {
      const { rows: server } = await client.query<{ lz4: boolean }>(
        `select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`,
      );
      await client.query('begin');
      const batch = request();
      await store(client, batch);
      const result = await (
        await applyBatch(harness.db.revisions.within(client), arrayCommandSource(commands, { version: 'v2', sender: SENDER }), batch)
      ).result();
      expect(result.outcome).toBe('success');
      const { rows } = await client.query<{ method: string | null }>(
        'select pg_column_compression(record) as method from entity where entity_type = $1',
        [entityType],
      );
      expect(rows).toEqual([{ method: server[0]!.lz4 ? 'lz4' : 'pglz' }]);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});
