import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchEnded } from '../support/batch-ended.ts';
import { batchXml, create } from '../support/batches.ts';
import { startHarness, type Harness } from '../support/harness.ts';
import { pollUntil } from '../support/poll.ts';

// One reader asks for exports of everything, again and again, and for many
// different ones: identical requests share one export, its running exports
// stop at EXPORTS_RUNNING_PER_PRINCIPAL (429 with Retry-After), an import
// meanwhile completes on its first attempt (exports have their own lane),
// and another principal's saves and reads all succeed. Exports hold their
// files open mid-write (a test seam) for as long as the scenario needs them running.

const EVERYTHING = '[]';

/** A gate the test opens: exports wait at their first progress step until then. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => opened, open: () => open() };
}

async function exportEnded(
  harness: Harness,
  id: string,
): Promise<{ status: string; requestedIds: unknown; upToTransId: string | null; bytes: string }> {
  return pollUntil(
    async () => {
      const [row] = await harness.sql<{ status: string; requestedIds: unknown; upToTransId: string | null; bytes: string }>(
        `select status, requested_ids as "requestedIds", up_to_trans_id as "upToTransId", bytes from export_request where id = $1`,
        [id],
      );
      return row && row.status !== 'ACCEPTED' && row.status !== 'RUNNING' ? row : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `export ${id} to end` },
  );
}

const startExport = (harness: Harness, body: string) =>
  harness.api('/api/v2/export/snapshots', { method: 'POST', as: 'export', headers: { 'content-type': 'application/json' }, body });

/** The exports of earlier files of the run by the same principal must not count against this one's limit. */
async function endEarlierExports(harness: Harness): Promise<void> {
  await harness.sql(
    `update export_request set status = 'FAILED', requested_ids = null where requested_by = 'test-exporter' and status in ('ACCEPTED', 'RUNNING')`,
  );
}

/** Starts an export (200) and waits until it has written its first bytes, which count against the disk from then on. */
async function startWrittenExport(harness: Harness, body: string): Promise<string> {
  const started = await startExport(harness, body);
  expect(started.status).toBe(200);
  const id = await started.text();
  await pollUntil(
    async () =>
      Number((await harness.sql<{ bytes: string }>('select bytes from export_request where id = $1', [id]))[0]?.bytes) > 0 || undefined,
    { timeoutMs: 30_000, intervalMs: 100, what: 'the export to write' },
  );
  return id;
}

describe('exports bounded', () => {
  const held = gate();
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({
      // Every batch goes to the bulk lane: the import below is one.
      env: { EXPORTS_RUNNING_PER_PRINCIPAL: '2', EXPORT_REUSE_SECONDS: '600', SMALL_BATCH_MAX_BYTES: '0' },
      exportRecordsPerStep: 1,
      afterExportStep: () => held.wait(),
    });
    await endEarlierExports(harness);
  });
  afterAll(async () => {
    held.open();
    await harness?.close();
  });

  it('shares identical exports, caps a reader running exports, and completes an import and an ordinary client meanwhile', async () => {
    // Records for the exports to be held on.
    const seeded = await harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'admin',
      headers: { 'content-type': 'application/xml' },
      body: batchXml([create('a', `Exported ${randomUUID()}`)]),
    });
    expect((await batchEnded(harness, (await seeded.json()) as string)).status).toBe('COMPLETED');

    // 300 starts of everything, 30 at a time: one export, whose id every answer names.
    const ids: string[] = [];
    for (let round = 0; round < 10; round += 1) {
      const answers = await Promise.all(Array.from({ length: 30 }, () => startExport(harness, EVERYTHING)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));
      ids.push(...(await Promise.all(answers.map((answer) => answer.text()))));
    }
    expect(new Set(ids).size).toBe(1);
    const everything = ids[0]!;

    // Different exports: one more runs (the limit is 2), the rest are refused with Retry-After.
    const distinct = await Promise.all(Array.from({ length: 20 }, (_, n) => startExport(harness, JSON.stringify([900_000_000 + n]))));
    const admitted = distinct.filter((answer) => answer.status === 200);
    const refused = distinct.filter((answer) => answer.status === 429);
    expect([admitted.length, refused.length]).toEqual([1, 19]);
    for (const answer of refused) {
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(((await answer.json()) as { properties?: { reason?: string } }).properties?.reason).toBe('ExportsRunning');
    }
    const other = await admitted[0]!.text();
    expect(
      await harness.sql(`select 1 from export_request where requested_by = 'test-exporter' and status in ('ACCEPTED', 'RUNNING')`),
    ).toHaveLength(2);

    // While both exports are held mid-write: an import and an ordinary client's saves and reads.
    const importXml = batchXml(Array.from({ length: 40 }, (_, n) => create(`i${n}`, `Imported ${n} ${randomUUID()}`)));
    const imported = await harness.api('/api/v2/batches', {
      method: 'POST',
      as: 'write',
      headers: { 'content-type': 'application/xml' },
      body: importXml,
    });
    expect(imported.status).toBe(200);
    const importId = (await imported.json()) as string;
    const saves: string[] = [];
    for (let n = 0; n < 3; n += 1) {
      const save = await harness.api('/api/v2/batches', {
        method: 'POST',
        as: 'admin',
        headers: { 'content-type': 'application/xml' },
        body: batchXml([create('a', `Ordinary ${randomUUID()}`)]),
      });
      expect(save.status).toBe(200);
      saves.push((await save.json()) as string);
    }
    expect((await batchEnded(harness, importId, 60_000)).status).toBe('COMPLETED');
    const [importRow] = await harness.sql<{ activity_attempts: number; changes_total: number }>(
      'select activity_attempts, changes_total from batch where id = $1',
      [importId],
    );
    expect(importRow).toEqual({ activity_attempts: 1, changes_total: 40 });
    for (const save of saves) expect((await batchEnded(harness, save)).status).toBe('COMPLETED');
    const read = await harness.api('/api/v2/search?page=1&pageSize=5', {
      method: 'POST',
      as: 'read',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ types: ['PERSON'] }),
    });
    expect(read.status).toBe(200);
    // The exports are still held: the import never waited for their slot.
    expect((await harness.sql<{ status: string }>('select status from export_request where id = $1', [everything]))[0]!.status).toBe(
      'RUNNING',
    );

    held.open();
    const ended = await Promise.all([exportEnded(harness, everything), exportEnded(harness, other)]);
    expect(ended.map((row) => row.status)).toEqual(['COMPLETED', 'COMPLETED']);
    // The requested ids go once an export ends; its count stays for the status.
    expect(ended.map((row) => row.requestedIds)).toEqual([null, null]);
    expect((await harness.sql<{ n: number }>('select requested_count as n from export_request where id = $1', [other]))[0]!.n).toBe(1);

    // Asked again, the completed export is the answer, with the transaction its snapshot reaches.
    const again = await startExport(harness, EVERYTHING);
    expect(await again.text()).toBe(everything);
    const detail = (await (await harness.api(`/api/v2/export/${everything}/detail`, { as: 'export' })).json()) as Record<string, unknown>;
    expect(JSON.stringify(detail)).toContain(ended[0]!.upToTransId!);
    // Nothing lost: the file holds what was committed when it started; the import, committed after, follows its upToTransId in the feed.
    const download = await harness.api(`/api/v2/export/download/${everything}`, {
      as: 'export',
      headers: { 'accept-encoding': 'identity' },
    });
    expect(download.status).toBe(200);
    expect(await download.text()).toContain('Exported ');
    const [order] = await harness.sql<{ after: boolean }>(
      `select (select commit_seq from transaction where batch_id = $1) > (select commit_seq from transaction where uuid = $2) as after`,
      [importId, ended[0]!.upToTransId],
    );
    expect(order!.after).toBe(true);
  });
});

describe('the export disk budget', () => {
  const held = gate();
  let harness: Harness;
  beforeAll(async () => {
    const probe = await startHarness({ worker: false });
    const [{ bytes }] = (await probe.sql<{ bytes: string }>(
      `select coalesce(sum(bytes), 0) as bytes from export_request where status in ('ACCEPTED', 'RUNNING') or (status = 'COMPLETED' and expires_at > now())`,
    )) as [{ bytes: string }];
    await endEarlierExports(probe);
    await probe.close();
    // Room for one more export to start, none for a second once it wrote its first records.
    harness = await startHarness({
      env: { EXPORT_DISK_BUDGET_BYTES: String(Number(bytes) + 1), EXPORTS_RUNNING_PER_PRINCIPAL: '5', EXPORT_REUSE_SECONDS: '600' },
      exportRecordsPerStep: 1,
      afterExportStep: () => held.wait(),
    });
  });
  afterAll(async () => {
    held.open();
    await harness?.close();
  });

  it('refuses new exports with 503 once spent, never fails a running one, and still shares an identical one', async () => {
    const firstId = await startWrittenExport(harness, JSON.stringify([1, 2, 3]));

    const second = await startExport(harness, JSON.stringify([4, 5, 6]));
    expect(second.status).toBe(503);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await second.json()) as { properties?: { reason?: string } }).properties?.reason).toBe('ExportDiskBudget');
    // The same request as the running one is that one, budget or not.
    expect(await (await startExport(harness, JSON.stringify([1, 2, 3]))).text()).toBe(firstId);

    held.open();
    expect((await exportEnded(harness, firstId)).status).toBe('COMPLETED');
  });
});

describe("a principal's share of the export disk", () => {
  const held = gate();
  let harness: Harness;
  beforeAll(async () => {
    const probe = await startHarness({ worker: false });
    await endEarlierExports(probe);
    const [{ bytes }] = (await probe.sql<{ bytes: string }>(
      `select coalesce(sum(bytes), 0) as bytes from export_request
        where requested_by = 'test-exporter' and (status in ('ACCEPTED', 'RUNNING') or (status = 'COMPLETED' and expires_at > now()))`,
    )) as [{ bytes: string }];
    await probe.close();
    // Room for one more export of the exporter, none for a second once it wrote its first records; the budget of all is ample.
    harness = await startHarness({
      env: { EXPORT_DISK_BYTES_PER_PRINCIPAL: String(Number(bytes) + 1), EXPORTS_RUNNING_PER_PRINCIPAL: '5' },
      exportRecordsPerStep: 1,
      afterExportStep: () => held.wait(),
    });
  });
  afterAll(async () => {
    held.open();
    await harness?.close();
  });

  it("refuses the principal's next export with 429 once its share is spent, while another principal's export starts", async () => {
    const firstId = await startWrittenExport(harness, JSON.stringify([1, 2, 3]));

    const second = await startExport(harness, JSON.stringify([4, 5, 6]));
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await second.json()) as { properties?: { reason?: string } }).properties?.reason).toBe('ExportDiskShare');

    const other = await harness.api('/api/v2/export/snapshots', {
      method: 'POST',
      as: 'admin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([4, 5, 6]),
    });
    expect(other.status).toBe(200);
    const otherId = await other.text();

    held.open();
    expect((await exportEnded(harness, firstId)).status).toBe('COMPLETED');
    expect((await exportEnded(harness, otherId)).status).toBe('COMPLETED');
  });
});
