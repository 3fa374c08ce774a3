// GETs of current records that arrive together share one statement
// (db/records.ts). Each answer must still be its own: status,
// ETag, 304 and body, by number or UUID, v2 or v1, found or not.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCurrentRecord } from '../../services/reads/entities.ts';
import { applyBatch, type AppliedRevision } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { seededRandom } from '../../bench/lib/generate.ts';
import { startHarness, type Harness } from '../support/harness.ts';

interface Read {
  path: string;
  headers?: Record<string, string>;
}

interface Seen {
  status: number;
  etag: string | null;
  type: string | null;
  body: string;
}

describe('GETs of records that arrive together', () => {
  let harness: Harness;
  let entities: AppliedRevision[];
  beforeAll(async () => {
    harness = await startHarness();
    const entityType = `TOGETHER-${randomUUID()}`;
    const names = ['Božena Němcová', 'Karel Havlíček', 'Jan Neruda', 'Karolina Světlá', 'Alois Jirásek', 'Jakub Arbes'];
    const applied = await applyBatch(harness, batchXml(names.map((name, index) => create(`e${index}`, name, { entityType }))));
    entities = names.map((_, index) => applied.revisions.get(`e${index}`)!);
  });
  afterAll(async () => {
    await harness?.close();
  });

  const read = async ({ path, headers }: Read): Promise<Seen> => {
    const answer = await harness.api(path, { headers });
    return { status: answer.status, etag: answer.headers.get('etag'), type: answer.headers.get('content-type'), body: await answer.text() };
  };

  it('answers each of many concurrent GETs (found and missing, by number and UUID, v2 and v1, 304) as it answers it alone', async () => {
    const etags = new Map<number, string>();
    for (const entity of entities)
      etags.set(entity.entityId, (await harness.api(`/api/v2/entities/${entity.entityId}`)).headers.get('etag')!);
    const reads: Read[] = [];
    for (const entity of entities) {
      reads.push(
        { path: `/api/v2/entities/${entity.entityId}` },
        { path: `/api/v2/entities/${entity.entityUuid}` },
        { path: `/api/v2/entities/${entity.entityUuid.toUpperCase()}` },
        { path: `/api/v1/entities/${entity.entityId}` },
        { path: `/api/v1/entities/${entity.entityUuid}` },
        { path: `/api/v2/entities/${entity.entityId}`, headers: { 'if-none-match': etags.get(entity.entityId)! } },
        { path: `/api/v1/entities/${entity.entityUuid}`, headers: { 'if-none-match': etags.get(entity.entityId)! } },
        { path: `/api/v2/entities/${entity.entityId}`, headers: { 'if-none-match': '"not-its-tag"' } },
      );
    }
    const missingUuid = randomUUID();
    reads.push(
      { path: '/api/v2/entities/2147483000' },
      { path: '/api/v1/entities/2147483001' },
      { path: `/api/v2/entities/${missingUuid}` },
      { path: `/api/v1/entities/${missingUuid}` },
      { path: '/api/v2/entities/9999999999999999' },
      { path: '/api/v2/entities/not-a-ref' },
    );
    const alone: Seen[] = [];
    for (const one of reads) alone.push(await read(one));
    expect(alone.filter((seen) => seen.status === 200)).toHaveLength(entities.length * 6);
    expect(alone.filter((seen) => seen.status === 304)).toHaveLength(entities.length * 2);
    expect(alone.filter((seen) => seen.status === 404)).toHaveLength(6);

    // Every read four times over, in a seeded shuffle, all at once.
    const random = seededRandom(29);
    const order = [...reads.keys(), ...reads.keys(), ...reads.keys(), ...reads.keys()].sort(() => random() - 0.5);
    const together = await Promise.all(order.map((index) => read(reads[index]!)));
    for (const [position, index] of order.entries()) {
      const seen = together[position]!;
      // The request id is the only part of a problem that differs between two answers.
      const strip = (body: string) => body.replace(/"requestId":"[^"]*"/, '');
      expect({ ...seen, body: strip(seen.body) }, reads[index]!.path).toEqual({ ...alone[index]!, body: strip(alone[index]!.body) });
    }
  });

  it('sends the reads of one turn as one statement', async () => {
    const pool = harness.db.pool;
    const statements: string[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    const counting = ((...args: unknown[]) => {
      statements.push(String((args[0] as pg.QueryConfig).name ?? args[0]));
      return query(...args);
    }) as typeof pool.query;
    pool.query = counting;
    try {
      const refs = [
        ...entities.map((entity) => ({ entityId: entity.entityId })),
        ...entities.map((entity) => ({ entityUuid: entity.entityUuid })),
        { entityId: 2147483002 },
        { entityUuid: randomUUID() },
      ];
      const records = await Promise.all(refs.map((ref) => findCurrentRecord(harness.db.records, ref)));
      expect(statements).toEqual(['current-records-by-both']);
      expect(records.map((record) => record?.entityId)).toEqual([
        ...entities.map((entity) => entity.entityId),
        ...entities.map((entity) => entity.entityId),
        undefined,
        undefined,
      ]);
    } finally {
      pool.query = query as typeof pool.query;
    }
  });

  it('sends the reads asked while a statement is in flight, in whatever turns, as the next statement', async () => {
    const pool = harness.db.pool;
    const statements: unknown[][] = [];
    const names: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    const counting = (async (...args: unknown[]) => {
      const config = args[0] as pg.QueryConfig;
      if (config.name?.startsWith('current-records') === true) {
        statements.push(config.values!.flat());
        names.push(config.name);
        // The first statement is answered only once every read has been asked.
        if (statements.length === 1) await held;
      }
      return query(...args);
    }) as unknown as typeof pool.query;
    pool.query = counting;
    try {
      const [first, ...others] = entities;
      const reads = [findCurrentRecord(harness.db.records, { entityId: first!.entityId })];
      // Each of the others in a turn of its own, all while the first statement waits.
      for (const entity of others) {
        await new Promise((resolve) => setImmediate(resolve));
        reads.push(findCurrentRecord(harness.db.records, { entityUuid: entity.entityUuid }));
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(statements).toHaveLength(1);
      release();
      const records = await Promise.all(reads);
      expect(records.map((record) => record?.entityId)).toEqual(entities.map((entity) => entity.entityId));
      expect(statements).toEqual([[String(first!.entityId)], others.map((entity) => entity.entityUuid)]);
      // Numbers alone and UUIDs alone each take the statement of their own key (a plain index scan, no BitmapOr).
      expect(names).toEqual(['current-records-by-ids', 'current-records-by-uuids']);
    } finally {
      release();
      pool.query = query as typeof pool.query;
    }
  });
});
