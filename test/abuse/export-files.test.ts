import { mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryExportStore } from '../../services/exports/files.ts';

const exportFileKey = (id: string) => `${id}.xml`;

// Export files hold whole registries: private to the service's user, and
// never reached through a symbolic link planted in the directory.

describe('export files', () => {
  it('are written 0600 in a 0700 directory', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'er-export-modes-')), 'exports');
    const store = directoryExportStore(dir);
    const file = await store.create('00000000-0000-4000-8000-00000000e001', 1);
    await file.write(Buffer.from('<x/>'));
    const key = await file.commit();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, key)).mode & 0o777).toBe(0o600);
  });

  it('are neither written nor served through a symbolic link', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'er-export-links-'));
    const secret = join(mkdtempSync(join(tmpdir(), 'er-export-target-')), 'secret');
    writeFileSync(secret, 'not for clients');
    const id = '00000000-0000-4000-8000-00000000e002';
    symlinkSync(secret, join(dir, exportFileKey(id)));
    const store = directoryExportStore(dir);
    await expect(store.open(exportFileKey(id))).rejects.toThrow();
    symlinkSync(secret, join(dir, `.${id}.attempt-1.tmp`));
    // The attempt's temporary file is removed first; a link in its place is replaced, never followed.
    const file = await store.create(id, 1).catch((error: unknown) => error as Error);
    if (!(file instanceof Error)) await file.abort();
    expect(readFileSync(secret, 'utf8')).toBe('not for clients');
  });
});
