// entity_count (Migration20261127000200EntityCounts): how many entities each
// type has in each state, kept by entity's own statement triggers as rows of
// deltas, exact in every snapshot; the total of a search by types and states
// alone is read from it. Its rows are folded without waiting for a writer
// that holds some of them, so overlapping batches never wait on each other
// for it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';

interface Tally {
  entity_type: string;
  state: string;
  entities: number;
}

describe('the entity counts by type and state', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  const TALLY = `select entity_type, state, sum(entities)::int as entities from entity_count where entity_type = any($1::text[]) group by 1, 2 having sum(entities) <> 0 order by 1, 2`;
  const COUNTED = `select entity_type, state, count(*)::int as entities from entity where entity_type = any($1::text[]) group by 1, 2 order by 1, 2`;

  // Names of their own: a preferred name another entity of the type holds is refused.
  const created = (entityType: string, count: number) => {
    const batch = randomUUID();
    return batchXml(Array.from({ length: count }, (_, index) => create(`e${index}`, `Count ${batch} ${index}`, { entityType })));
  };

  it('follows inserts, updates that move entities and deletes in the writer’s own snapshot, and a rollback leaves it as it was', async () => {
    const [first, second] = [`COUNT-${randomUUID()}`, `COUNT-${randomUUID()}`];
    const client = await harness.db.pool.connect();
    try {
      await client.query('begin');
      // Rows by hand, never committed: nobody else sees them.
      const insert = (ids: number[]) =>
        client.query(
          `insert into entity (id, uuid, entity_type, state, rev, metadata_rev, last_seq, record)
             select id, gen_random_uuid(), $2, 'ERS_NEW', gen_random_uuid(), gen_random_uuid(), 0, '{}' from unnest($1::bigint[]) id`,
          [ids, first],
        );
      const base = 9_000_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
      await insert([base, base + 1, base + 2]);
      await insert([base + 3]);
      await client.query(`update entity set state = 'ERS_APPROVED' where id = any($1::bigint[])`, [[base, base + 1]]);
      await client.query(`update entity set entity_type = $2 where id = $1`, [base + 2, second]);
      await client.query(`delete from entity where id = $1`, [base + 3]);
      const tally = (await client.query<Tally>(TALLY, [[first, second]])).rows;
      const expected = [
        { entity_type: first, state: 'ERS_APPROVED', entities: 2 },
        { entity_type: second, state: 'ERS_NEW', entities: 1 },
      ];
      expect(tally).toEqual(expected.sort((a, b) => (a.entity_type < b.entity_type ? -1 : 1)));
      expect(tally).toEqual((await client.query<Tally>(COUNTED, [[first, second]])).rows);
      await client.query('rollback');
      expect(await harness.sql(TALLY, [[first, second]])).toEqual([]);
    } finally {
      client.release();
    }
  });

  it('matches what overlapping batches wrote, and gives the total of a search by types and states', async () => {
    const entityType = `COUNT-${randomUUID()}`;
    await Promise.all([applyBatch(harness, created(entityType, 3)), applyBatch(harness, created(entityType, 4))]);
    expect(await harness.sql(TALLY, [[entityType]])).toEqual([{ entity_type: entityType, state: 'ERS_NEW', entities: 7 }]);
    expect(await harness.sql(TALLY, [[entityType]])).toEqual(await harness.sql(COUNTED, [[entityType]]));
    // A full first page of 2: the total is not read off the page but summed from entity_count.
    const total = async (state: string[]) => {
      const response = await harness.api('/api/v2/search?page=1&pageSize=2', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ types: [entityType], state }),
      });
      expect(response.status).toBe(200);
      return Number(/<count>(\d+)<\/count>/.exec(await response.text())![1]);
    };
    expect(await total(['ERS_NEW'])).toBe(7);
    expect(await total(['ERS_NEW', 'ERS_APPROVED'])).toBe(7);
    expect(await total(['ERS_APPROVED'])).toBe(0);
  });

  it('is folded by a writer without waiting for the rows another transaction holds', async () => {
    const filler = `COUNT-FILLER-${randomUUID()}`;
    const entityType = `COUNT-${randomUUID()}`;
    // More rows than a writer folds after (256), all held by an open transaction.
    await harness.sql(`insert into entity_count (entity_type, state, entities) select $1, 'ERS_NEW', 0 from generate_series(1, 300)`, [
      filler,
    ]);
    const holder = await harness.db.pool.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from entity_count where entity_type = $1 for update`, [filler]);
      // The batch's insert folds what it can lock and passes the rest by; were it to wait, it would wait for ever.
      await applyBatch(harness, created(entityType, 2));
      expect(await harness.sql(TALLY, [[entityType]])).toEqual([{ entity_type: entityType, state: 'ERS_NEW', entities: 2 }]);
      expect(await harness.sql(`select count(*)::int as rows from entity_count where entity_type = $1`, [filler])).toEqual([{ rows: 300 }]);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    // Released, the filler's rows are folded by the next writer (their sum, 0, leaves no row).
    await applyBatch(harness, created(entityType, 1));
    expect(await harness.sql(`select count(*)::int as rows from entity_count where entity_type = $1`, [filler])).toEqual([{ rows: 0 }]);
    expect(await harness.sql(TALLY, [[entityType]])).toEqual([{ entity_type: entityType, state: 'ERS_NEW', entities: 3 }]);
  });
});
