import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BATCH_WRITTEN_TABLES } from '../../db/analyze.ts';
import { backupDatabase } from '../../db/backup.ts';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { dropScratchDatabase, scratchDatabaseUrl } from '../support/scratch-database.ts';

// Planner statistics after large writes: a batch of at least
// ANALYZE_AFTER_RECORDS records is followed by ANALYZE of the tables it
// wrote (pg_stat_user_tables.last_analyze: a manual or service ANALYZE, never
// autovacuum's); a smaller one is not. A restore analyzes every table.

const THRESHOLD = 30;
const run = promisify(execFile);
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

type LastAnalyzed = Record<string, string | null>;

async function lastAnalyzed(query: (sql: string, params: unknown[]) => Promise<{ relname: string; last: string | null }[]>) {
  const rows = await query(
    `select relname, last_analyze::text as last from pg_stat_user_tables where schemaname = current_schema() and relname = any($1::text[])`,
    [[...BATCH_WRITTEN_TABLES]],
  );
  return Object.fromEntries(rows.map((row) => [row.relname, row.last])) as LastAnalyzed;
}

describe('ANALYZE after large writes', () => {
  let harness: Harness;
  const entityType = `T-${randomUUID()}`;
  const analyzedNow = () => lastAnalyzed((sql, params) => harness.sql(sql, params));

  /** Applies `count` new records in one batch and waits for its workflow to end (the ANALYZE runs after the commit, in its activity). */
  async function applyRecords(count: number): Promise<void> {
    const prefix = randomUUID().slice(0, 8);
    const creates = Array.from({ length: count }, (_, index) => create(`r${index}`, `Analyzovaný ${prefix} ${index}`, { entityType }));
    const { batchId } = await applyBatch(harness, batchXml(creates));
    await harness.temporal.workflow.getHandle(batchId).result();
  }

  beforeAll(async () => {
    harness = await startHarness({ env: { ANALYZE_AFTER_RECORDS: String(THRESHOLD) } });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('a batch below the threshold leaves the statistics as they were', async () => {
    const before = await analyzedNow();
    await applyRecords(THRESHOLD - 1);
    expect(await analyzedNow()).toEqual(before);
  });

  it('a batch at the threshold analyzes every table it wrote', async () => {
    const before = await analyzedNow();
    await applyRecords(THRESHOLD);
    const after = await analyzedNow();
    expect(Object.keys(after).sort()).toEqual([...BATCH_WRITTEN_TABLES].sort());
    for (const table of BATCH_WRITTEN_TABLES) {
      expect(after[table], table).not.toBeNull();
      expect(after[table], table).not.toBe(before[table]);
    }
  });

  it('a table another session is analyzing is skipped, not waited for', async () => {
    // What a second worker's ANALYZE of entity holds while it runs.
    const other = await harness.db.pool.connect();
    try {
      await other.query(`select pg_advisory_lock(hashtextextended('analyze:' || $1, 0))`, ['entity']);
      const before = await analyzedNow();
      await applyRecords(THRESHOLD);
      const after = await analyzedNow();
      expect(after.entity).toBe(before.entity);
      expect(after.revision).not.toBe(before.revision);
    } finally {
      await other.query(`select pg_advisory_unlock_all()`);
      other.release();
    }
  });

  it('npm run db:restore analyzes every table it restored', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'analyze-restore-')), 'registry.dump');
    await backupDatabase(inject('databaseUrl'), file);
    const restoredUrl = scratchDatabaseUrl('analyzed');
    await run('npm', ['run', '--silent', 'db:restore', '--', file], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, DATABASE_URL: restoredUrl },
    });
    const restored = new pg.Client({ connectionString: withDatabaseUser(restoredUrl) });
    await restored.connect();
    try {
      const after = await lastAnalyzed(async (sql, params) => (await restored.query(sql, params)).rows);
      for (const table of BATCH_WRITTEN_TABLES) expect(after[table], table).not.toBeNull();
    } finally {
      await restored.end();
      await dropScratchDatabase(restoredUrl);
    }
  });
});
