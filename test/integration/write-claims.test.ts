import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_KINDS, claimKeys } from '../../db/write-claims.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { eventually } from '../support/poll.ts';

// Claims (db/write-claims.ts): the keys go by COPY into a temporary table and
// are claimed from there; a second transaction claiming one of them waits for
// the first to end, and nothing of a claim stays in write_claim.

describe('write claims', () => {
  let harness: Harness;
  let pool: pg.Pool;
  beforeAll(async () => {
    harness = await startHarness({ worker: false });
    pool = harness.db.pool;
  });
  afterAll(async () => {
    await harness?.close();
  });

  async function begun(): Promise<pg.PoolClient> {
    const client = await pool.connect();
    await client.query('begin');
    return client;
  }

  it('claims keys COPY would have to escape, many at once, and leaves no row or staging table behind', async () => {
    // Keys with what COPY's text format escapes, duplicates, and more than one COPY piece of them.
    const keys = [
      'T\u0001back\\slash',
      'T\u0001tab\there',
      'T\u0001line\nend',
      'T\u0001cr\rhere',
      'T\u0001back\\slash',
      ...Array.from({ length: 2500 }, (_, i) => `T\u0001name ${i}`),
    ];
    const first = await begun();
    const second = await begun();
    try {
      await claimKeys(first, CLAIM_KINDS.preferredName, keys);
      expect(
        (await first.query(`select count(*)::int as n from pg_class where relname = 'claim_keys_${CLAIM_KINDS.preferredName}'`)).rows,
      ).toEqual([{ n: 0 }]);
      // Another transaction claiming a key with a backslash must wait for the first one.
      await second.query(`set local lock_timeout = '200ms'`);
      await expect(claimKeys(second, CLAIM_KINDS.preferredName, ['T\u0001back\\slash'])).rejects.toThrow(/lock timeout/);
      await second.query('rollback');
      await second.query('begin');
      // A key of another kind, or one nobody claimed, does not wait.
      await second.query(`set local lock_timeout = '200ms'`);
      await claimKeys(second, CLAIM_KINDS.entityUuid, ['T\u0001back\\slash']);
      await claimKeys(second, CLAIM_KINDS.preferredName, ['T\u0001back\\slashes']);
      await first.query('commit');
      await second.query('commit');
      expect((await pool.query('select count(*)::int as n from write_claim')).rows).toEqual([{ n: 0 }]);
    } finally {
      await first.query('rollback').catch(() => undefined);
      await second.query('rollback').catch(() => undefined);
      first.release();
      second.release();
    }
  });

  it('lets the second claimer through once the first has committed', async () => {
    const first = await begun();
    const second = await begun();
    try {
      await claimKeys(first, CLAIM_KINDS.entityUuid, ['0b6f3c2e-0000-4000-8000-000000000001']);
      const backend = async (client: pg.PoolClient) => (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const [firstPid, secondPid] = [await backend(first), await backend(second)];
      let claimed = false;
      const waiting = claimKeys(second, CLAIM_KINDS.entityUuid, ['0b6f3c2e-0000-4000-8000-000000000001']).then(() => (claimed = true));
      // The second's backend waits on a lock, and the first's transaction is what it waits for.
      const blockers = await eventually(async () => {
        const { rows } = await pool.query<{ blockers: number[] }>(
          `select pg_blocking_pids(pid) as blockers from pg_stat_activity where pid = $1 and wait_event_type = 'Lock'`,
          [secondPid],
        );
        return rows[0]?.blockers;
      });
      expect(blockers).toContain(firstPid);
      expect(claimed).toBe(false);
      await first.query('commit');
      await waiting;
      expect(claimed).toBe(true);
      await second.query('commit');
    } finally {
      await first.query('rollback').catch(() => undefined);
      await second.query('rollback').catch(() => undefined);
      first.release();
      second.release();
    }
  });
});
