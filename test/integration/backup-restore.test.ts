import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
// numbers past every number the lost database issued.

describe('backup while imports run, restore into a fresh database', () => {
  const gate = new Gate();
  const entityType = `BACKUP-${randomUUID()}`;
  const restoredUrl = (() => {
    const url = new URL(inject('databaseUrl'));
    url.pathname = `${url.pathname}_restored`;
    return url.toString();
  })();
  let live: Harness;
  let restored: Harness | undefined;
  beforeAll(async () => {
    live = await startHarness({ afterWriteStep: (batchId) => gate.pass(batchId) });
  });
  afterAll(async () => {
    await restored?.close();
    await live?.close();
    const admin = new URL(withDatabaseUser(restoredUrl));
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`drop database if exists ${pg.escapeIdentifier(new URL(restoredUrl).pathname.slice(1))} with (force)`);
    await client.end();
  });

  it('serves the same records and feed up to its point, and never gives a number twice', async () => {
    const before = await applyBatch(live, batchXml([create('a', 'Jan Amos Komenský', { entityType }), create('b', 'Mikuláš Dačický', { entityType })]));

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
    const importEntity = (await live.sql<{ entity_id: string }>('select entity_id from revision where batch_id = $1 limit 1', [importId]))[0]!.entity_id;
    expect((await restored.api(`/api/v2/entities/${importEntity}`)).status).toBe(404);
    expect((await restored.api(`/api/v2/updates/from/${after.transaction}`)).status).toBe(404);
    // The import is in the backup as it was: under way, for the recovery sweep to apply again on the restored database.
    expect(await restored.sql('select status from batch where id = $1', [importId])).toEqual([{ status: 'PROCESSING' }]);
  });
});
