import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backupDatabase, restoreDatabase } from '../../db/backup.ts';
import { withDatabaseUser } from '../../db/mikro-orm.config.ts';
import { GENESIS_TRANSACTION_ID } from '../../migrations/Migration20261123000005Genesis.ts';
import { applyBatch } from '../support/apply.ts';
import { batchXml, create } from '../support/batches.ts';
import { Gate } from '../support/gate.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { batchEnded } from '../support/batch-ended.ts';

// A backup taken while an import is being applied, restored into a fresh
// database: the restored registry serves the same records and the same feed
// up to the backup's point, knows nothing after it, and gives new records
// numbers past every number the lost database issued. The same through the
// npm commands an operator runs.

const run = promisify(execFile);
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `npm run <script> -- ...args` as an operator runs it, from the project's folder; its output. */
async function npmRun(script: string, args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run('npm', ['run', '--silent', script, '--', ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });
  return stdout;
}

/** A URL naming another database beside the run's; dropped by dropDatabase. */
function scratchDatabaseUrl(suffix: string): string {
  const url = new URL(inject('databaseUrl'));
  url.pathname = `${url.pathname}_${suffix}`;
  return url.toString();
}

async function dropDatabase(databaseUrl: string): Promise<void> {
  const admin = new URL(withDatabaseUser(databaseUrl));
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database if exists ${pg.escapeIdentifier(new URL(databaseUrl).pathname.slice(1))} with (force)`);
  await client.end();
}

describe('backup while imports run, restore into a fresh database', () => {
  const gate = new Gate();
  const entityType = `BACKUP-${randomUUID()}`;
  const restoredUrl = scratchDatabaseUrl('restored');
  const commandRestoredUrl = scratchDatabaseUrl('restored_by_npm');
  let live: Harness;
  let restored: Harness | undefined;
  let commandRestored: Harness | undefined;
  beforeAll(async () => {
    live = await startHarness({ afterWriteStep: (batchId) => gate.pass(batchId) });
  });
  afterAll(async () => {
    await restored?.close();
    await commandRestored?.close();
    await live?.close();
    await dropDatabase(restoredUrl);
    await dropDatabase(commandRestoredUrl);
  });

  it('serves the same records and feed up to its point, and never gives a number twice', async () => {
    const before = await applyBatch(
      live,
      batchXml([create('a', 'Jan Amos Komenský', { entityType }), create('b', 'Mikuláš Dačický', { entityType })]),
    );

    // An import under way: its transaction is open while the backup is taken.
    const importId = randomUUID();
    gate.hold(importId);
    const submitted = await live.api('/api/v2/batches', {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('c', 'Bohuslav Balbín', { entityType }), create('d', 'Václav Hollar', { entityType })], { uuid: importId }),
    });
    expect(submitted.status).toBe(200);
    const release = await gate.reached(importId);
    const file = join(mkdtempSync(join(tmpdir(), 'backup-')), 'registry.dump');
    await backupDatabase(inject('databaseUrl'), file);
    release();
    expect((await batchEnded(live, importId)).status).toBe('COMPLETED');
    const after = await applyBatch(live, batchXml([create('e', 'Karel Škréta', { entityType })]));
    const highest = (await live.sql<{ highest: string }>('select max(id) as highest from entity'))[0]!.highest;

    const outcome = await restoreDatabase(restoredUrl, file, { gap: 1000 });
    expect(outcome.nextRecordNumber).toBeGreaterThan(Number(highest));
    expect(outcome.nextRecordNumber).toBe(outcome.highestInBackup + 1000 + 1);
    restored = await startHarness({ worker: false, env: { DATABASE_URL: restoredUrl } });

    // The same records, byte for byte, up to the backup's point.
    for (const { entityId } of before.revisions.values()) {
      const [original, copy] = await Promise.all([live.api(`/api/v2/entities/${entityId}`), restored.api(`/api/v2/entities/${entityId}`)]);
      expect(copy.status).toBe(200);
      expect(await copy.text()).toBe(await original.text());
    }
    // The same feed up to the backup's point.
    const page = `/api/v2/updates?fromTransId=${GENESIS_TRANSACTION_ID}&toTransId=${before.transaction}&page=1&pageSize=1000`;
    const [livePage, restoredPage] = await Promise.all([live.api(page), restored.api(page)]);
    expect(restoredPage.status).toBe(200);
    expect(await restoredPage.text()).toBe(await livePage.text());
    // Nothing after it: the import was not committed when the backup was taken, the later batch came after.
    const importEntity = (
      await live.sql<{ entity_id: string }>('select entity_id from revision where batch_id = $1 limit 1', [importId])
    )[0]!.entity_id;
    expect((await restored.api(`/api/v2/entities/${importEntity}`)).status).toBe(404);
    expect((await restored.api(`/api/v2/updates/from/${after.transaction}`)).status).toBe(404);
    // The import is in the backup as it was: under way, for the recovery sweep to apply again on the restored database.
    expect(await restored.sql('select status from batch where id = $1', [importId])).toEqual([{ status: 'PROCESSING' }]);
  });

  it('npm run db:backup and npm run db:restore: the restored database serves the same records, and new numbers start past the gap', async () => {
    const applied = await applyBatch(
      live,
      batchXml([create('a', 'Jan Evangelista Purkyně', { entityType }), create('b', 'Josef Dobrovský', { entityType })]),
    );
    const file = join(mkdtempSync(join(tmpdir(), 'backup-')), 'registry.dump');
    expect(await npmRun('db:backup', [file], { DATABASE_URL: inject('databaseUrl') })).toContain(`written to ${file}`);
    // The highest number the live database has issued: its records' and its sequence's (a rolled-back apply uses numbers too).
    const issued = `select greatest((select case when is_called then last_value else last_value - 1 end from entity_id_seq), (select max(id) from entity)) as highest`;
    const highest = Number((await live.sql<{ highest: string }>(issued))[0]!.highest);

    const gap = 5000;
    const output = await npmRun('db:restore', [file], { DATABASE_URL: commandRestoredUrl, RESTORE_RECORD_NUMBER_GAP: String(gap) });
    expect(output).toContain(`highest record number in the backup ${highest}; the next new record gets ${highest + gap + 1}`);
    commandRestored = await startHarness({ worker: false, env: { DATABASE_URL: commandRestoredUrl } });
    for (const { entityId } of applied.revisions.values()) {
      const [original, copy] = await Promise.all([
        live.api(`/api/v2/entities/${entityId}`),
        commandRestored.api(`/api/v2/entities/${entityId}`),
      ]);
      expect(copy.status).toBe(200);
      expect(await copy.text()).toBe(await original.text());
    }
    expect(await commandRestored.sql(`select nextval('entity_id_seq') as next`)).toEqual([{ next: String(highest + gap + 1) }]);
  });
});
