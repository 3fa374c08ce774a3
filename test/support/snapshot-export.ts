import { expect } from 'vitest';
import type { Harness } from './harness.ts';
import { eventually } from './poll.ts';

/** A snapshot export of `ids` in `format`, run to COMPLETED through the API; its id and its file's text. */
export async function snapshotExportFile(
  harness: Harness,
  ids: readonly number[],
  format: string,
): Promise<{ exportId: string; file: string }> {
  const started = await harness.api(`/api/v2/export/snapshots?format=${format}`, {
    method: 'POST',
    as: 'export',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ids),
  });
  expect(started.status, await started.clone().text()).toBe(200);
  const exportId = await started.text();
  const status = await eventually(async () => {
    const detail = (await (await harness.api(`/api/v2/export/${exportId}/detail`, { as: 'read' })).json()) as { status: string };
    return detail.status === 'COMPLETED' || detail.status === 'FAILED' ? detail.status : undefined;
  }, 60_000);
  expect(status).toBe('COMPLETED');
  const download = await harness.api(`/api/v2/export/download/${exportId}`, { as: 'export', headers: { 'accept-encoding': 'identity' } });
  expect(download.status).toBe(200);
  expect(download.headers.get('content-disposition')).toContain(`snapshot-${format}-${exportId}.xml`);
  return { exportId, file: await download.text() };
}
